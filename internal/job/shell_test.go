package job

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestQuoteParam(t *testing.T) {
	for _, tt := range []struct {
		ctx   quoting
		v     string
		want  string
		exact bool
	}{
		// Values that need no quoting are spliced as they are everywhere,
		// as before quoting existed.
		{unquoted, "1000", "1000", true},
		{unquoted, "4k", "4k", true},
		{unquoted, "fast_path", "fast_path", true},
		{unquoted, "a/b.txt", "a/b.txt", true},
		{unquoted, "x@y%z+w=v:u,t-1", "x@y%z+w=v:u,t-1", true},
		{unquoted, "", "", true}, // no argument at all, as before
		{opaque, "1000", "1000", true},
		{inDouble, "fast_path", "fast_path", true},
		{inSingle, "fast_path", "fast_path", true},
		// The rest is single-quoted where it stands unquoted.
		{unquoted, "1; touch /tmp/x", "'1; touch /tmp/x'", true},
		{unquoted, "a b", "'a b'", true},
		{unquoted, "it's", `'it'\''s'`, true},
		{unquoted, "'", `''\'''`, true},
		{unquoted, "$(id)", "'$(id)'", true},
		{unquoted, "*", "'*'", true},
		{unquoted, "~/x", "'~/x'", true},
		{unquoted, "a\nb", "'a\nb'", true},
		{unquoted, "é", "'é'", true},
		// Inside "...", only $ ` " \ are escaped.
		{inDouble, "a b; c|d 'e'", "a b; c|d 'e'", true},
		{inDouble, `$(id) ` + "`id`" + ` "q" \n`, `\$(id) \` + "`id\\`" + ` \"q\" \\n`, true},
		{inDouble, "a\nb", "a\nb", true},
		// Inside '...', only ' is.
		{inSingle, `a b $(id) "q" \`, `a b $(id) "q" \`, true},
		{inSingle, "it's", `it'\''s`, true},
		// Where perfbot does not follow the quoting, a value that needs
		// quoting cannot be spliced exactly.
		{opaque, "a b", "'a b'", false},
	} {
		got, exact := quoteParam(tt.ctx, tt.v)
		if got != tt.want || exact != tt.exact {
			t.Errorf("quoteParam(%d, %q) = %q, %v; want %q, %v", tt.ctx, tt.v, got, exact, tt.want, tt.exact)
		}
	}
}

func TestScanRefs(t *testing.T) {
	// Each ${v} in the command is reported with its quoting; "-" marks
	// a reference to a name that is not v (still reported).
	for _, tt := range []struct {
		cmd  string
		want []string
	}{
		{"./bench ${v} -n=${v}x ${HOME}", []string{"plain", "plain", "-"}},
		{`./bench "${v}" '${v}' "a '${v}'" 'a "${v}"'`, []string{"double", "single", "double", "single"}},
		{`echo "it's ${v}" ${v}`, []string{"double", "plain"}},
		{`echo 'a'"${v}"'${v}'${v}`, []string{"double", "single", "plain"}},
		{`echo \' ${v} \" ${v}`, []string{"plain", "plain"}},
		{`echo "\" ${v}" ${v}`, []string{"double", "plain"}},
		{`echo "\\" ${v}`, []string{"plain"}},
		{`echo "a\b ${v}"`, []string{"double"}},
		{"echo # it's a comment ${v}\necho ${v}", []string{"plain", "plain"}},
		{"echo a#b' ${v}'", []string{"single"}},
		{`echo \${v} "\${v}" $${v} "$${v}" $$${v} \\${v}`, []string{"opaque a backslash", "opaque a backslash", `opaque "$"`, `opaque "$"`, "plain", "plain"}},
		{"echo $(nproc) ${v}", []string{`opaque "$("`}},
		{"echo \"$((1+2))\" ${v}", []string{`opaque "$("`}},
		{"echo `nproc` ${v}", []string{"opaque a backquote"}},
		{"echo \"`nproc`\" ${v}", []string{"opaque a backquote"}},
		{"echo ${X:-1} ${v}", []string{`opaque "${"`}},
		{"echo ${X:-${v}}", []string{`opaque "${"`}},
		{"echo $'a' ${v}", []string{`opaque "$'"`}},
		{"cat <<EOF\n${v}\nEOF", []string{`opaque "<<"`}},
		{"echo ${v} $(nproc)", []string{"plain"}},
		{"echo ${1} ${v-x} ${v }", nil},
	} {
		var got []string
		for _, r := range scanRefs(tt.cmd) {
			switch {
			case r.name != "v":
				got = append(got, "-")
			case r.ctx == opaque:
				got = append(got, "opaque "+r.why)
			default:
				got = append(got, []string{"plain", "double", "single"}[r.ctx])
			}
		}
		if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
			t.Errorf("scanRefs(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

// TestSubstituteSafeAsBefore: for values that need no quoting, commands
// (and so job keys) are what plain substitution gave before quoting.
func TestSubstituteSafeAsBefore(t *testing.T) {
	vals := map[string]string{"size": "1000", "mode": "fast_path", "in": "a/b.txt", "empty": ""}
	for _, cmd := range []string{
		"./bench ${size} -mode=${mode} ${in} ${empty} ${HOME}",
		`make CFLAGS="$CFLAGS -DSIZE=${size}" '${mode}' \${in} $${size} $(nproc ${size}) ${X:-${mode}}`,
		"cat <<EOF\n${size}\nEOF\n`echo ${mode}`",
		"${size}${mode}$${in}${${empty}}",
	} {
		if got, want := substituteCommand(cmd, vals), substitute(cmd, vals); got != want {
			t.Errorf("substituteCommand(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// FuzzSubstituteSafe checks the same for any command and safe value.
func FuzzSubstituteSafe(f *testing.F) {
	f.Add(`./bench "${v}" '${v}' ${v} \${v} $(x ${v}) # ${v}`, "1000")
	f.Add("cat <<EOF\n${v}\nEOF", "a/b.txt")
	f.Fuzz(func(t *testing.T, cmd, v string) {
		if !shellSafe(v) {
			return
		}
		vals := map[string]string{"v": v}
		if got, want := substituteCommand(cmd, vals), substitute(cmd, vals); got != want {
			t.Fatalf("substituteCommand(%q) = %q, want %q", cmd, got, want)
		}
	})
}

// TestParamsReachTheShellAsOneArgument runs the substituted commands with
// sh -c, as package run does, and checks that each value arrives whole and
// unchanged, and that nothing in a value runs.
func TestParamsReachTheShellAsOneArgument(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	values := []string{
		"1; touch pwned", "1000", "a b", "it's", `"q"`, `\`, `a\nb`, "a\nb", "$(touch pwned)", "`touch pwned`",
		"${HOME}", "*", "~", "-n", "x' ; touch pwned ; '", `x" ; touch pwned ; "`, "é",
	}
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strings.ReplaceAll(v, "\n", `\n`)
	}
	src := strings.Replace(minimal, "./bench 20000 1  # run in the same worktree",
		`printf '[%s]\n' ${v} "${v}" '${v}' x${v}y "<${v}>" 'a ${v} b'`, 1) +
		"params:\n  v: [\"" + strings.Join(jsonEscape(values), `", "`) + "\"]\n"
	jobs := mustParse(t, "jobs/x.yaml", src)
	if len(jobs) != len(values) {
		t.Fatalf("%d jobs for %d values", len(jobs), len(values))
	}
	for i, j := range jobs {
		v := values[i]
		dir := t.TempDir()
		cmd := exec.Command("sh", "-c", j.Run.Command)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("value %q: sh -c %q: %v\n%s", quoted[i], j.Run.Command, err, out)
			continue
		}
		want := "[" + v + "]\n[" + v + "]\n[" + v + "]\n[x" + v + "y]\n[<" + v + ">]\n[a " + v + " b]\n"
		if string(out) != want {
			t.Errorf("value %q: sh -c %q printed\n%s\nwant\n%s", quoted[i], j.Run.Command, out, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Errorf("value %q: sh -c %q ran a command from the value", quoted[i], j.Run.Command)
		}
	}
}

// jsonEscape writes each value as the inside of a YAML double-quoted string.
func jsonEscape(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
	}
	return out
}

func TestParamRefErrors(t *testing.T) {
	withRun := func(cmd, values string) string {
		return strings.Replace(minimal, "./bench 20000 1  # run in the same worktree", cmd, 1) + "params:\n  v: " + values + "\n"
	}
	// Safe values may stand anywhere.
	for _, cmd := range []string{"./bench $(nproc) ${v}", "./bench `nproc` \\${v}", "cat <<EOF\n${v}\nEOF"} {
		src := strings.Replace(minimal, "  command: ./bench 20000 1  # run in the same worktree", "  command: |\n    "+strings.ReplaceAll(cmd, "\n", "\n    "), 1) + "params:\n  v: [1000, fast_path]\n"
		if _, err := Parse("x.yaml", []byte(src)); err != nil {
			t.Errorf("run.command %q with safe values: %v", cmd, err)
		}
	}
	for _, tt := range []struct {
		src  string
		want string
	}{
		{withRun("./bench $(nproc) ${v}", "[1000, 'a b']"),
			`x.yaml:6: run.command: ${v} stands after "$(", where perfbot cannot quote its value "a b" for the shell; use $PERFBOT_PARAM_V there instead (see docs/jobs.md)`},
		{withRun(`./bench \${v} ${v}`, "[1000, 'a b', 'c d']"),
			`x.yaml:6: run.command: ${v} stands after a backslash, where perfbot cannot quote its value "a b" for the shell; use $PERFBOT_PARAM_V there instead (see docs/jobs.md)`},
		{strings.Replace(withRun("./bench", "'1;2'"), "make bench", "make N=`echo ${v}`", 1),
			"x.yaml:3: build.command: ${v} stands after a backquote, where perfbot cannot quote its value \"1;2\" for the shell; use $PERFBOT_PARAM_V there instead (see docs/jobs.md)"},
		{withRun("./bench ${v}", `"a\0b"`),
			`x.yaml:14: params.v: "a\x00b" holds a NUL byte, which no command or environment can carry`},
	} {
		_, err := Parse("x.yaml", []byte(tt.src))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse:\n%v\nwant\n%s", err, tt.want)
		}
	}
}
