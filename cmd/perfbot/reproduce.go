package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perfbot/perfbot/internal/job"
)

// once are flags that act on one invocation and must not be repeated: a
// printed command with --restart would throw away the finished state it
// reproduces.
var once = map[string]bool{"restart": true}

// reproduce is the command line that repeats cmd: "perfbot", the command's
// path, args, then every flag that was set on the command line with its
// value (a deprecated alias by the name it stands for), and the flags of
// set (resolved values, such as commit hashes for revisions, which replace
// what was typed), sorted by name and quoted for the shell.
func reproduce(cmd *cobra.Command, args []string, set map[string]string) string {
	vals := map[string]string{}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if _, alias := f.Annotations[aliasOf]; !once[f.Name] && !alias {
			vals[f.Name] = f.Value.String()
		}
	})
	for k, v := range set {
		vals[k] = v
	}
	parts := []string{cmd.CommandPath()}
	for _, a := range args {
		parts = append(parts, job.ShellQuote(a))
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if v, ok := vals[f.Name]; ok {
			if f.Value.Type() == "bool" && v == "true" {
				parts = append(parts, "--"+f.Name)
			} else {
				parts = append(parts, "--"+f.Name+"="+job.ShellQuote(v))
			}
		}
	})
	return strings.Join(parts, " ")
}
