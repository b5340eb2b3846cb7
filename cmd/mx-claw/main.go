// Command mx-claw is a coding agent for the terminal. See internal/cli for
// its subcommands; this file only hands the process to it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mx-claw/mx-claw/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := cli.Main(ctx, os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
