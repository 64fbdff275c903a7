package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/perfbot/perfbot/internal/version"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print perfbot's version and the revision it was built from",
		Long: `version prints the module version ("devel" for a build of a work tree, else
the release), the git revision the go command stamped into the binary and
whether its work tree had uncommitted changes, the revision's commit time and
the Go version. go run, go test and go build -buildvcs=false stamp no
revision: the output says so. perfbot --version prints the same.

Every run perfbot stores records this version ("devel 0123456789ab", the
revision cut to 12 digits, "+modified" for uncommitted changes), and a comparison whose runs were taken by
different versions says so under its table.

Exit status: 0; 2 on bad arguments.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(a.stdout, version.Get().Long())
			return err
		},
	}
}

// setVersion gives the root command --version, which prints what perfbot
// version does.
func setVersion(root *cobra.Command) {
	root.Version = version.Get().String()
	root.SetVersionTemplate(version.Get().Long())
}
