package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/mx-claw/mx-claw/internal/safefile"
)

// Approval records that the user allowed a project's server to start: the
// entry named Name in Workspace's .mcp.json, exactly as it was (Hash). A
// changed entry needs a new approval.
type Approval struct {
	Workspace  string    `json:"workspace"`
	Name       string    `json:"name"`
	Hash       string    `json:"hash"`
	ApprovedAt time.Time `json:"approvedAt"`
}

// approvalsFile is $MX_CLAW_HOME/mcp/approved.json.
func approvalsFile(home string) string { return filepath.Join(stateDir(home), "approved.json") }

type approvalList struct {
	Version  int        `json:"version"`
	Approved []Approval `json:"approved"`
}

// Approvals returns the stored approvals.
func Approvals(home string) ([]Approval, error) {
	data, err := safefile.ReadFile(approvalsFile(home), maxStateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var l approvalList
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", approvalsFile(home), err)
	}
	return l.Approved, nil
}

// IsApproved reports whether the project server s of workspace has been
// approved as it is now written.
func IsApproved(home, workspace string, s *Server) (bool, error) {
	list, err := Approvals(home)
	if err != nil {
		return false, err
	}
	h := s.Hash()
	return slices.ContainsFunc(list, func(a Approval) bool {
		return a.Workspace == workspace && a.Name == s.Name && a.Hash == h
	}), nil
}

// Approve records the user's approval of the project server s of
// workspace, replacing an approval of an earlier version of the entry.
func Approve(home, workspace string, s *Server, now time.Time) error {
	list, err := Approvals(home)
	if err != nil {
		return err
	}
	list = slices.DeleteFunc(list, func(a Approval) bool { return a.Workspace == workspace && a.Name == s.Name })
	list = append(list, Approval{Workspace: workspace, Name: s.Name, Hash: s.Hash(), ApprovedAt: now.UTC()})
	return saveApprovals(home, list)
}

// Revoke forgets the approval of the project server name of workspace; it
// reports whether there was one.
func Revoke(home, workspace, name string) (bool, error) {
	list, err := Approvals(home)
	if err != nil {
		return false, err
	}
	n := len(list)
	list = slices.DeleteFunc(list, func(a Approval) bool { return a.Workspace == workspace && a.Name == name })
	if len(list) == n {
		return false, nil
	}
	return true, saveApprovals(home, list)
}

func saveApprovals(home string, list []Approval) error {
	data, err := json.MarshalIndent(approvalList{Version: 1, Approved: list}, "", " ")
	if err != nil {
		return err
	}
	return writeFileAtomic(approvalsFile(home), data)
}
