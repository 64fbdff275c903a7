// Package testutil holds the helpers perfbot's tests share: the tools and
// machine capabilities a test needs, a scratch git repository, and golden
// files. Only _test.go files import it.
//
// # Tools and capabilities
//
// [NeedTool] skips a test when a tool it runs is missing. With
// PERFBOT_TEST_STRICT=1 (.ci/run sets it) a tool that CI installs fails the
// test instead, naming the tool and its Debian package, so that a broken CI
// image does not turn into a green run of skipped tests. Tools that CI does
// not install (cargo, rustc, flex, bison) always skip.
//
// [SkipIncapable] skips a test the machine cannot run although every tool
// is there (perf_event_paranoid forbids perf record, only one CPU to pin
// to, setarch -R refused): that is a property of the machine, not of its
// installation, so it skips in strict mode too, with its reason.
//
// # Golden files
//
// [Golden] compares output with a file under testdata; go test -update
// rewrites the files instead (the flag is registered here, so it exists in
// every test binary that imports this package):
//
//	go test ./internal/report -update
package testutil
