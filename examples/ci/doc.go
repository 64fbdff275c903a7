// Package ci holds perfbot's CI recipes (a GitHub Actions workflow, its
// follow-up for fork pull requests, a GitLab CI job, and the shell scripts
// they share) and the tests that lint them and run their steps; see
// docs/ci.md. It has no Go code of its own.
package ci
