package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// runDir holds one lock file per slot and, while a slot is in use, the state
// that its teardown needs. A slot's flock is held for the life of the
// environment, so the kernel releases it when the process dies however it
// dies; a state file in a slot whose lock is free is a crashed run's.
const runDir = "/run/capi-dns-testenv"

// sharedDirs are made by containerd 1.6 (shim sockets, whatever its
// configuration says), libcni (its cache), `ip netns add` and kubelet (links
// to container logs) outside the environment's folder; they are removed
// when the last environment with nodes stops, if one of them made them.
var sharedDirs = []string{"/run/containerd", "/run/containerd/s", "/var/lib/cni", "/run/netns", "/var/log/containers"}

// slotState is everything a teardown removes, written before any of it is
// made.
type slotState struct {
	Slot        int      `json:"slot"`
	PID         int      `json:"pid"`
	Dir         string   `json:"dir"`
	Bridge      string   `json:"bridge"`
	Netns       []string `json:"netns"`
	CgroupRoots []string `json:"cgroupRoots"`
	NodeDirs    []string `json:"nodeDirs"`
}

type slotLock struct {
	slot int
	file *os.File
}

func lockPath(slot int) string  { return filepath.Join(runDir, fmt.Sprintf("slot-%d.lock", slot)) }
func statePath(slot int) string { return filepath.Join(runDir, fmt.Sprintf("slot-%d.json", slot)) }

// claimSlot takes the first free slot.
func claimSlot() (*slotLock, error) {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, err
	}
	for s := 0; s < maxSlots; s++ {
		l, err := tryLock(s)
		if err != nil {
			return nil, err
		}
		if l != nil {
			return l, nil
		}
	}
	return nil, fmt.Errorf("all %d slots of environments with nodes are in use (locks in %s)", maxSlots, runDir)
}

// tryLock locks slot s, or returns nil if another process holds it.
func tryLock(s int) (*slotLock, error) {
	for {
		f, err := os.OpenFile(lockPath(s), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, nil
			}
			return nil, fmt.Errorf("lock %s: %w", lockPath(s), err)
		}
		// The last environment to stop removes the lock files; a lock taken
		// on a file removed meanwhile proves nothing, so take the new one.
		var held, onDisk unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(lockPath(s), &onDisk) == nil && held.Ino == onDisk.Ino {
			return &slotLock{slot: s, file: f}, nil
		}
		f.Close()
	}
}

// leftovers is the state a crashed environment left in this slot, if any.
func (l *slotLock) leftovers() (*slotState, error) {
	raw, err := os.ReadFile(statePath(l.slot))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st slotState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(l.slot), err)
	}
	return &st, nil
}

func (l *slotLock) record(st slotState) error {
	raw, _ := json.MarshalIndent(st, "", "  ")
	tmp := statePath(l.slot) + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(l.slot))
}

// noteSharedDirs records which of sharedDirs do not exist yet: this
// environment (or a later one) is about to make them.
func noteSharedDirs() error {
	path := filepath.Join(runDir, "made-shared-dirs.json")
	var made []string
	if raw, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(raw, &made)
	}
	for _, d := range sharedDirs {
		if _, err := os.Lstat(d); errors.Is(err, os.ErrNotExist) && !containsString(made, d) {
			made = append(made, d)
		}
	}
	raw, _ := json.Marshal(made)
	return os.WriteFile(path, raw, 0o644)
}

// release ends the slot: its state file goes, and if no other environment
// holds a slot, the shared folders an environment made and runDir itself.
func (l *slotLock) release() {
	_ = os.Remove(statePath(l.slot))
	others := []*slotLock{}
	alone := true
	for s := 0; s < maxSlots; s++ {
		if s == l.slot {
			continue
		}
		o, err := tryLock(s)
		if err != nil || o == nil {
			alone = false
			break
		}
		others = append(others, o)
	}
	if alone {
		removeSharedDirs()
		for s := 0; s < maxSlots; s++ {
			_ = os.Remove(statePath(s))
			_ = os.Remove(lockPath(s))
		}
		_ = os.Remove(filepath.Join(runDir, "made-shared-dirs.json"))
		_ = os.Remove(runDir)
	}
	for _, o := range others {
		o.file.Close()
	}
	l.file.Close()
}

func removeSharedDirs() {
	var made []string
	if raw, err := os.ReadFile(filepath.Join(runDir, "made-shared-dirs.json")); err == nil {
		_ = json.Unmarshal(raw, &made)
	}
	for _, d := range made {
		if d == "/run/netns" {
			// `ip netns add` makes /run/netns a shared mount of itself; remove
			// it only once no namespace of anyone else is in it.
			if entries, err := os.ReadDir(d); err == nil && len(entries) == 0 {
				_ = unix.Unmount(d, unix.MNT_DETACH)
				_ = os.Remove(d)
			}
			continue
		}
		_ = os.RemoveAll(d)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
