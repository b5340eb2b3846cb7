package cli

import (
	"github.com/spf13/cobra"

	"github.com/mx-claw/mx-claw/internal/appserver"
)

func newAppServerCmd(stdio IO) *cobra.Command {
	var f stdioFlags
	var schema bool
	cmd := &cobra.Command{
		Use:   "app-server",
		Short: "Serve JSON-RPC on stdin and stdout, for programs that embed mx-claw",
		Long: `Speak JSON-RPC 2.0 on stdin and stdout (one message per line) for programs
that drive mx-claw: start or resume a thread (a session), start a turn,
interrupt it, list and read threads. Every event comes as a notification, and
calls that need approval come as requests the client answers. --schema prints
the JSON Schema of every message. Diagnostics go to
$MX_CLAW_HOME/logs/app-server.log.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if schema {
				data, err := appserver.Schema()
				if err != nil {
					return err
				}
				_, err = stdio.Out.Write(data)
				return err
			}
			d, _, log, closeAll, err := openStdio(cmd.Context(), f, "app-server")
			if err != nil {
				return err
			}
			defer closeAll()
			log.Info("app-server start", "version", Version)
			err = appserver.Serve(cmd.Context(), stdio.In, stdio.Out, appserver.Options{Driver: d, Version: Version, Logger: log})
			log.Info("app-server stop", "err", err)
			return err
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&schema, "schema", false, "print the JSON Schema of the messages and exit")
	return cmd
}
