package sandbox

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// HelperArg is the hidden first argument that makes the mx-claw binary
// (or a test binary) run as the sandbox helper instead of itself: the
// entry point calls [HelperMain] when it sees it.
const HelperArg = "__sandbox-exec"

// helperExit is the helper's exit status when it could not set the
// sandbox up; its message on stderr starts with helperPrefix.
const (
	helperExit   = 125
	helperPrefix = "mx-claw sandbox: "
)

// netFilter is what the seccomp filter does to sockets.
type netFilter int

const (
	// netAllow leaves sockets alone.
	netAllow netFilter = iota
	// netUnixOnly denies every socket but AF_UNIX.
	netUnixOnly
	// netStreamOnly allows AF_UNIX and TCP (AF_INET, AF_INET6
	// SOCK_STREAM) sockets, for a command that reaches the network only
	// through the proxy; Landlock or a network namespace limits where TCP
	// may connect.
	netStreamOnly
)

// helperSpec is what the helper is asked to do, passed as one argument.
type helperSpec struct {
	// Backend is bwrap, landlock, seatbelt or none.
	Backend string `json:"backend"`
	// Argv is what to exec once the process is confined.
	Argv []string `json:"argv"`
	// Limits are the resource limits to set.
	Limits Limits `json:"limits"`
	// NoAddressLimit leaves the address space alone (the program execed is
	// the Go bridge, which sets it for the command).
	NoAddressLimit bool `json:"noAddressLimit,omitempty"`
	// NprocRlimit says to cap processes with RLIMIT_NPROC (no cgroup).
	NprocRlimit bool `json:"nprocRlimit,omitempty"`
	// Wait says to read one byte from fd 3 first: the parent has put the
	// helper into its cgroup.
	Wait bool `json:"wait,omitempty"`
	// Net is the seccomp socket filter (netAllow, netUnixOnly,
	// netStreamOnly); Seccomp says whether to filter at all.
	Seccomp bool      `json:"seccomp,omitempty"`
	Net     netFilter `json:"net,omitempty"`
	// Landlock: the write grants, and the network (NetOff: no TCP;
	// ProxyPort: TCP connect to that port only).
	Grants    []grant `json:"grants,omitempty"`
	NetOff    bool    `json:"netOff,omitempty"`
	ProxyPort int     `json:"proxyPort,omitempty"`
	// Bridge (bwrap with allowed hosts): listen on 127.0.0.1:BridgePort
	// inside the sandbox's network namespace and forward each connection
	// to the proxy's Unix socket BridgeSocket.
	BridgeSocket string `json:"bridgeSocket,omitempty"`
	BridgePort   int    `json:"bridgePort,omitempty"`
}

func (s helperSpec) encode() string {
	b, _ := json.Marshal(s)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeSpec(arg string) (helperSpec, error) {
	var s helperSpec
	b, err := base64.RawURLEncoding.DecodeString(arg)
	if err != nil {
		return s, err
	}
	err = json.Unmarshal(b, &s)
	if err == nil && len(s.Argv) == 0 {
		err = fmt.Errorf("nothing to run")
	}
	return s, err
}

// IsHelper reports whether args (os.Args) ask for the helper.
func IsHelper(args []string) bool { return len(args) > 1 && args[1] == HelperArg }

// HelperMain runs the helper with os.Args and returns only on failure,
// with the exit status to use; on success the process has become the
// confined command.
func HelperMain(args []string, stderr io.Writer) int {
	if len(args) < 3 {
		fmt.Fprintln(stderr, helperPrefix+"missing specification")
		return helperExit
	}
	spec, err := decodeSpec(args[2])
	if err != nil {
		fmt.Fprintln(stderr, helperPrefix+"bad specification: "+err.Error())
		return helperExit
	}
	// runHelper execs the command, so it returns only with an error on
	// Linux; elsewhere it may run the command and return nil.
	//lint:ignore SA4023 runHelper returns nil on other platforms
	if err := runHelper(spec); err != nil {
		fmt.Fprintln(stderr, helperPrefix+strings.TrimSpace(err.Error()))
		return helperExit
	}
	return 0
}

// waitGo reads the parent's go-ahead from fd 3.
func waitGo() error {
	f := os.NewFile(3, "go")
	defer f.Close()
	var b [1]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return fmt.Errorf("no go-ahead from mx-claw: %v", err)
	}
	return nil
}
