#!/bin/sh
# gate.sh: runs perfbot gate on $PERFBOT_BASE and $PERFBOT_HEAD (revs.sh
# prints them) and turns its exit status into the CI's outcome.
#
#   $PERFBOT               the perfbot binary (default: perfbot on PATH)
#   $PERFBOT_JOB           the job file (default: perfbot.yml)
#   $PERFBOT_COMMENT       the Markdown for the PR comment (default: gate.md)
#   $PERFBOT_OUTCOME       where the outcome word goes (default: gate.outcome)
#   $PERFBOT_GATE_ARGS     more flags for perfbot gate (--max-time 10m ...)
#   $PERFBOT_INCONCLUSIVE_EXIT  this script's exit status when the gate is
#                          inconclusive (default 3; the GitHub recipe sets 0
#                          and reports neutral with a check run)
#
# The outcome (pass, regression, inconclusive, error) is written to
# $PERFBOT_OUTCOME and, under GitHub Actions, as outcome=... and status=...
# to $GITHUB_OUTPUT. perfbot gate itself appends its Markdown to
# $GITHUB_STEP_SUMMARY when that is set. Exit status: 0 pass, 1 regression,
# $PERFBOT_INCONCLUSIVE_EXIT inconclusive, 2 error.
set -u

perfbot=${PERFBOT:-perfbot}
job=${PERFBOT_JOB:-perfbot.yml}
comment=${PERFBOT_COMMENT:-gate.md}
outcome_file=${PERFBOT_OUTCOME:-gate.outcome}
neutral=${PERFBOT_INCONCLUSIVE_EXIT:-3}

status=0
if [ -z "${PERFBOT_BASE:-}" ] || [ -z "${PERFBOT_HEAD:-}" ]; then
	echo "gate.sh: PERFBOT_BASE and PERFBOT_HEAD must be set (revs.sh prints them)" >&2
	status=2
else
	rm -f "$comment"
	# shellcheck disable=SC2086 # PERFBOT_GATE_ARGS is a list of flags
	"$perfbot" gate "$job" "$PERFBOT_BASE" "$PERFBOT_HEAD" --comment "$comment" ${PERFBOT_GATE_ARGS:-} || status=$?
fi

case $status in
0) outcome=pass ;;
1) outcome=regression ;;
3) outcome=inconclusive ;;
*) outcome=error ;;
esac
echo "$outcome" >"$outcome_file"
if [ ! -s "$comment" ]; then
	# perfbot could not say anything: the comment says so, not nothing.
	printf '**perfbot gate: error** (exit status %s): the gate did not run to a verdict; see the job log.\n' "$status" >"$comment"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	printf 'outcome=%s\nstatus=%s\n' "$outcome" "$status" >>"$GITHUB_OUTPUT"
	[ "$outcome" = inconclusive ] &&
		echo "::warning title=perfbot gate::inconclusive within the budget: $(head -n 1 "$comment")"
fi

case $outcome in
pass) exit 0 ;;
regression) exit 1 ;;
inconclusive) exit "$neutral" ;;
esac
exit 2
