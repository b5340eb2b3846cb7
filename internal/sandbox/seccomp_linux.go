package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// alwaysDenied are the system calls no sandboxed command may make: reading
// or changing other processes (ptrace, process_vm_*) and io_uring, whose
// operations bypass the per-syscall filter.
func alwaysDenied() []uint32 {
	return []uint32{unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER}
}

// BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const (
	bpfLdW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfAnd  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K
	retOK   = unix.SECCOMP_RET_ALLOW
	retDeny = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)

	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits of args[0] on a little-endian machine
	offArg1 = 24
)

// auditArch returns the seccomp architecture of this build and whether
// its syscall numbers need the x32 check.
func auditArch() (uint32, bool, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, false, nil
	}
	return 0, false, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
}

// prog assembles a BPF program with forward jumps to labels.
type prog struct {
	ins    []unix.SockFilter
	fixups map[int][2]string // instruction → labels of jt, jf
	labels map[string]int
}

func (p *prog) stmt(code uint16, k uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: code, K: k})
}

// jump adds a conditional jump; "" as a label means the next instruction.
func (p *prog) jump(code uint16, k uint32, jt, jf string) {
	if p.fixups == nil {
		p.fixups = map[int][2]string{}
	}
	p.fixups[len(p.ins)] = [2]string{jt, jf}
	p.ins = append(p.ins, unix.SockFilter{Code: code, K: k})
}

func (p *prog) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

func (p *prog) resolve() ([]unix.SockFilter, error) {
	for at, l := range p.fixups {
		for i, name := range l {
			if name == "" {
				continue
			}
			to, ok := p.labels[name]
			off := to - at - 1
			if !ok || off < 0 || off > 255 {
				return nil, fmt.Errorf("seccomp: bad jump to %q", name)
			}
			if i == 0 {
				p.ins[at].Jt = uint8(off)
			} else {
				p.ins[at].Jf = uint8(off)
			}
		}
	}
	return p.ins, nil
}

// seccompFilter builds the filter: EPERM for the always-denied calls, for
// any other architecture's calls (and x32's), and for sockets as net
// says; everything else is allowed.
func seccompFilter(net netFilter) ([]unix.SockFilter, error) {
	arch, x32, err := auditArch()
	if err != nil {
		return nil, err
	}
	var p prog
	p.stmt(bpfLdW, offArch)
	p.jump(bpfJeq, arch, "", "deny")
	p.stmt(bpfLdW, offNr)
	if x32 {
		p.jump(bpfJge, 0x40000000, "deny", "")
	}
	for _, nr := range alwaysDenied() {
		p.jump(bpfJeq, nr, "deny", "")
	}
	if net != netAllow {
		p.jump(bpfJeq, unix.SYS_SOCKET, "socket", "")
		p.jump(bpfJeq, unix.SYS_SOCKETPAIR, "socket", "")
	}
	p.stmt(bpfRet, retOK)
	if net != netAllow {
		p.label("socket")
		p.stmt(bpfLdW, offArg0)
		p.jump(bpfJeq, unix.AF_UNIX, "allow", "")
		if net == netStreamOnly {
			p.jump(bpfJeq, unix.AF_INET, "stream", "")
			p.jump(bpfJeq, unix.AF_INET6, "stream", "deny")
			p.label("stream")
			p.stmt(bpfLdW, offArg1)
			p.stmt(bpfAnd, 0xf) // the type without SOCK_NONBLOCK, SOCK_CLOEXEC
			p.jump(bpfJeq, unix.SOCK_STREAM, "allow", "deny")
		} else {
			p.jump(bpfJeq, unix.AF_UNIX, "allow", "deny")
		}
		p.label("allow")
		p.stmt(bpfRet, retOK)
	}
	p.label("deny")
	p.stmt(bpfRet, retDeny)
	return p.resolve()
}

// seccompBytes is the filter as the raw sock_filter array bwrap --seccomp
// reads.
func seccompBytes(f []unix.SockFilter) []byte {
	out := make([]byte, 0, len(f)*8)
	for _, ins := range f {
		out = binary.LittleEndian.AppendUint16(out, ins.Code)
		out = append(out, ins.Jt, ins.Jf)
		out = binary.LittleEndian.AppendUint32(out, ins.K)
	}
	return out
}

// installSeccomp loads the filter on the calling thread (which must be
// locked to its goroutine and exec next). no_new_privs must be set.
func installSeccomp(f []unix.SockFilter) error {
	if len(f) == 0 {
		return errors.New("empty seccomp filter")
	}
	fp := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp)))
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}
