#!/bin/sh
# revs.sh: the two commits a pull-request gate compares, from the CI's
# environment, made present in a shallow clone.
#
# BASE is the commit the change goes into: $PERFBOT_BASE when set, else
# GitHub's .pull_request.base.sha from $GITHUB_EVENT_PATH, else GitLab's
# $CI_MERGE_REQUEST_DIFF_BASE_SHA, else the merge base with
# origin/$GITHUB_BASE_REF. HEAD is what would land: $PERFBOT_HEAD, else
# $GITHUB_SHA (on pull_request, the merge commit of the change into BASE),
# else $CI_COMMIT_SHA, else the checked-out HEAD.
#
# Prints PERFBOT_BASE=<sha> and PERFBOT_HEAD=<sha> on standard output and,
# under GitHub Actions, base=<sha> and head=<sha> to $GITHUB_OUTPUT. A
# commit missing from the clone is fetched from origin (depth 1). Exit
# status 2, with the reason, when a commit cannot be found.
set -u

die() {
	echo "revs.sh: $*" >&2
	exit 2
}

base=${PERFBOT_BASE:-}
head=${PERFBOT_HEAD:-}
if [ -z "$base" ] && [ -n "${GITHUB_EVENT_PATH:-}" ]; then
	[ -r "$GITHUB_EVENT_PATH" ] || die "GITHUB_EVENT_PATH $GITHUB_EVENT_PATH: cannot read the event payload"
	base=$(jq -r '.pull_request.base.sha // empty' "$GITHUB_EVENT_PATH") ||
		die "GITHUB_EVENT_PATH $GITHUB_EVENT_PATH: not a JSON event payload"
fi
if [ -z "$base" ] && [ -n "${CI_MERGE_REQUEST_DIFF_BASE_SHA:-}" ]; then
	base=$CI_MERGE_REQUEST_DIFF_BASE_SHA
fi
if [ -z "$base" ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
	git fetch --no-tags --quiet origin "$GITHUB_BASE_REF" ||
		die "GITHUB_BASE_REF $GITHUB_BASE_REF: cannot fetch it from origin"
	base=$(git merge-base FETCH_HEAD HEAD) ||
		die "GITHUB_BASE_REF $GITHUB_BASE_REF: no merge base with HEAD (fetch more history: fetch-depth: 0)"
fi
[ -n "$base" ] || die "no base commit: set PERFBOT_BASE, or run on a pull_request event (GITHUB_EVENT_PATH) or a GitLab merge request pipeline (CI_MERGE_REQUEST_DIFF_BASE_SHA)"
[ -n "$head" ] || head=${GITHUB_SHA:-${CI_COMMIT_SHA:-}}
[ -n "$head" ] || head=$(git rev-parse HEAD) || die "no head commit: set PERFBOT_HEAD"

# present makes a commit available, fetching it when a shallow clone lacks it.
present() {
	git cat-file -e "$2^{commit}" 2>/dev/null && return 0
	git fetch --no-tags --quiet --depth=1 origin "$2" 2>/dev/null &&
		git cat-file -e "$2^{commit}" 2>/dev/null && return 0
	die "$1 commit $2: not in this clone and origin does not serve it"
}
present base "$base"
present head "$head"
base=$(git rev-parse "$base^{commit}") || die "base commit $base: not a commit"
head=$(git rev-parse "$head^{commit}") || die "head commit $head: not a commit"

echo "PERFBOT_BASE=$base"
echo "PERFBOT_HEAD=$head"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	printf 'base=%s\nhead=%s\n' "$base" "$head" >>"$GITHUB_OUTPUT"
fi
