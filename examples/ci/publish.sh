#!/bin/sh
# publish.sh: posts the gate's Markdown ($PERFBOT_COMMENT, default gate.md)
# as one pull-request comment that later runs edit (found by its first
# line, the marker below), and, on GitHub, a check run "perfbot gate" whose
# conclusion is the outcome in $PERFBOT_OUTCOME (default gate.outcome):
# success, failure, or neutral for an inconclusive gate.
#
# GitHub: $GITHUB_API_URL, $GITHUB_REPOSITORY, $GITHUB_TOKEN (pull-requests:
#   write, checks: write), the pull request $PERFBOT_PR (default: from
#   $GITHUB_EVENT_PATH) and the commit the check run belongs to,
#   $PERFBOT_CHECK_SHA (the pull request's head; none: no check run).
# GitLab: $CI_API_V4_URL, $CI_PROJECT_ID, $CI_MERGE_REQUEST_IID and a token
#   that may write notes, $PERFBOT_GITLAB_TOKEN (the job token may not).
#
# Without a token (a fork's pull request) it says so and exits 0: the step
# summary or the job's artifact still has the report. Needs curl and jq.
# With $PERFBOT_UNVERIFIED set (a fork's report) the check run is neutral
# and the comment starts by saying the report is unverified.
# Exit status 2 when the API refuses or the input is missing.
set -u

marker='<!-- perfbot gate -->'
comment=${PERFBOT_COMMENT:-gate.md}
outcome_file=${PERFBOT_OUTCOME:-gate.outcome}

die() {
	echo "publish.sh: $*" >&2
	exit 2
}

[ -r "$comment" ] || die "$comment: no report to post (did gate.sh run?)"
[ -r "$outcome_file" ] || die "$outcome_file: no outcome (did gate.sh run?)"
outcome=$(cat "$outcome_file")
case $outcome in
pass) conclusion=success ;;
regression | error) conclusion=failure ;;
inconclusive) conclusion=neutral ;;
*) die "$outcome_file: outcome \"$outcome\": want pass, regression, inconclusive or error" ;;
esac
# A report made by a workflow the pull request itself could change (a
# fork's, published by the follow-up workflow) is shown, not trusted: its
# check run is neutral whatever it says, and its comment says so.
if [ -n "${PERFBOT_UNVERIFIED:-}" ]; then
	conclusion=neutral
fi

tmp=$(mktemp -d) || die "cannot make a temporary folder"
trap 'rm -rf "$tmp"' EXIT
{
	echo "$marker"
	if [ -n "${PERFBOT_UNVERIFIED:-}" ]; then
		echo "> Unverified: this report comes from the pull request's own workflow run (a fork), which the pull request can change; the check run is neutral. A maintainer reruns the gate on a trusted runner to rely on it."
		echo
	fi
	cat "$comment"
} >"$tmp/body.md"
jq -Rs '{body: .}' <"$tmp/body.md" >"$tmp/body.json" || die "jq cannot encode $comment"

# api METHOD URL [BODYFILE]: a JSON request with the auth header in $tmp/auth.
api() {
	set -- "$1" "$2" "${3:-}"
	if [ -n "$3" ]; then
		curl -sS --fail-with-body -X "$1" -H @"$tmp/auth" -H 'Content-Type: application/json' --data-binary @"$3" "$2"
	else
		curl -sS --fail-with-body -X "$1" -H @"$tmp/auth" "$2"
	fi
}

if [ -n "${GITHUB_API_URL:-}" ]; then
	if [ -z "${GITHUB_TOKEN:-}" ]; then
		echo "publish.sh: no GITHUB_TOKEN: not commenting; the step summary has the report"
		exit 0
	fi
	pr=${PERFBOT_PR:-}
	if [ -z "$pr" ] && [ -n "${GITHUB_EVENT_PATH:-}" ]; then
		pr=$(jq -r '.pull_request.number // empty' "$GITHUB_EVENT_PATH") || die "GITHUB_EVENT_PATH $GITHUB_EVENT_PATH: not a JSON event payload"
	fi
	case $pr in
	'' | *[!0-9]*) die "pull request number \"$pr\": want digits (PERFBOT_PR, or a pull_request event)" ;;
	esac
	printf 'Accept: application/vnd.github+json\nAuthorization: Bearer %s\n' "$GITHUB_TOKEN" >"$tmp/auth"
	repo="$GITHUB_API_URL/repos/$GITHUB_REPOSITORY"
	list=$(api GET "$repo/issues/$pr/comments?per_page=100") || die "GET $repo/issues/$pr/comments: $list"
	id=$(printf '%s' "$list" | jq -r --arg m "$marker" '[.[] | select(.body | startswith($m))] | last | .id // empty') ||
		die "GET $repo/issues/$pr/comments: not a JSON list"
	if [ -n "$id" ]; then
		out=$(api PATCH "$repo/issues/comments/$id" "$tmp/body.json") || die "PATCH comment $id: $out"
		echo "publish.sh: updated comment $id on pull request $pr"
	else
		out=$(api POST "$repo/issues/$pr/comments" "$tmp/body.json") || die "POST comment on pull request $pr: $out"
		echo "publish.sh: commented on pull request $pr"
	fi
	if [ -n "${PERFBOT_CHECK_SHA:-}" ]; then
		jq -Rs --arg sha "$PERFBOT_CHECK_SHA" --arg c "$conclusion" --arg title "$(head -n 1 "$comment")" \
			'{name: "perfbot gate", head_sha: $sha, status: "completed", conclusion: $c,
			  output: {title: $title[0:1000], summary: .[0:65000]}}' <"$comment" >"$tmp/check.json" ||
			die "jq cannot encode the check run"
		out=$(api POST "$repo/check-runs" "$tmp/check.json") || die "POST check run: $out"
		echo "publish.sh: check run perfbot gate: $conclusion"
	fi
elif [ -n "${CI_API_V4_URL:-}" ]; then
	if [ -z "${PERFBOT_GITLAB_TOKEN:-}" ]; then
		echo "publish.sh: no PERFBOT_GITLAB_TOKEN: not commenting; the job's artifact gate.md has the report"
		exit 0
	fi
	iid=${CI_MERGE_REQUEST_IID:-}
	case $iid in
	'' | *[!0-9]*) die "CI_MERGE_REQUEST_IID \"$iid\": want digits (run in a merge request pipeline)" ;;
	esac
	printf 'PRIVATE-TOKEN: %s\n' "$PERFBOT_GITLAB_TOKEN" >"$tmp/auth"
	notes="$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$iid/notes"
	list=$(api GET "$notes?per_page=100&sort=asc&order_by=created_at") || die "GET $notes: $list"
	id=$(printf '%s' "$list" | jq -r --arg m "$marker" '[.[] | select(.body | startswith($m))] | last | .id // empty') ||
		die "GET $notes: not a JSON list"
	if [ -n "$id" ]; then
		out=$(api PUT "$notes/$id" "$tmp/body.json") || die "PUT note $id: $out"
		echo "publish.sh: updated note $id on merge request !$iid"
	else
		out=$(api POST "$notes" "$tmp/body.json") || die "POST note on merge request !$iid: $out"
		echo "publish.sh: commented on merge request !$iid"
	fi
else
	echo "publish.sh: neither GitHub (GITHUB_API_URL) nor GitLab (CI_API_V4_URL): nothing to post"
fi
