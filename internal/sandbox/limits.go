package sandbox

import "fmt"

// Limits are the resource limits of every command, on top of its timeout
// and output cap. Zero fields mean the default (see DefaultLimits).
type Limits struct {
	// CPUSeconds is the CPU time a command's processes may each use
	// (RLIMIT_CPU).
	CPUSeconds int64 `json:"cpuSeconds,omitempty"`
	// AddressSpaceMB caps each process's virtual memory (RLIMIT_AS).
	AddressSpaceMB int64 `json:"addressSpaceMB,omitempty"`
	// Processes caps the processes a command may have at once: a cgroup's
	// pids.max where mx-claw can create one (as root, where RLIMIT_NPROC
	// does not apply), else RLIMIT_NPROC above the user's current count.
	Processes int64 `json:"processes,omitempty"`
	// FileSizeMB caps the size of a file a command writes (RLIMIT_FSIZE).
	FileSizeMB int64 `json:"fileSizeMB,omitempty"`
}

// DefaultLimits are the limits when the settings give none: ten minutes of
// CPU (the longest timeout), 4 GiB of address space, 1024 processes and
// 1 GiB files.
func DefaultLimits() Limits {
	return Limits{CPUSeconds: 600, AddressSpaceMB: 4096, Processes: 1024, FileSizeMB: 1024}
}

// tighten applies settings' limits: the user's replace the defaults, a
// project's only lower them.
func (l Limits) tighten(o *Limits, user bool) Limits {
	if o == nil {
		return l
	}
	pick := func(cur, v int64) int64 {
		if v <= 0 {
			return cur
		}
		if user || v < cur {
			return v
		}
		return cur
	}
	l.CPUSeconds = pick(l.CPUSeconds, o.CPUSeconds)
	l.AddressSpaceMB = pick(l.AddressSpaceMB, o.AddressSpaceMB)
	l.Processes = pick(l.Processes, o.Processes)
	l.FileSizeMB = pick(l.FileSizeMB, o.FileSizeMB)
	return l
}

// orDefault fills zero fields with the defaults.
func (l Limits) orDefault() Limits {
	d := DefaultLimits()
	if l.CPUSeconds <= 0 {
		l.CPUSeconds = d.CPUSeconds
	}
	if l.AddressSpaceMB <= 0 {
		l.AddressSpaceMB = d.AddressSpaceMB
	}
	if l.Processes <= 0 {
		l.Processes = d.Processes
	}
	if l.FileSizeMB <= 0 {
		l.FileSizeMB = d.FileSizeMB
	}
	return l
}

// String describes the limits in one line.
func (l Limits) String() string {
	l = l.orDefault()
	return fmt.Sprintf("CPU %ds, address space %d MiB, %d processes, files %d MiB",
		l.CPUSeconds, l.AddressSpaceMB, l.Processes, l.FileSizeMB)
}
