package main

import (
	"bufio"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ourBinaries are the processes an environment with nodes runs; a process
// is only killed by its command line if it is one of these.
var ourBinaries = map[string]bool{
	"containerd": true, "containerd-shim-runc-v2": true, "kubelet": true,
	"kube-proxy": true, "kube-controller-manager": true, "kube-scheduler": true,
}

// teardown removes what an environment with nodes made, in an order that
// lets each step succeed: processes (containers, shims, containerd, kubelet,
// kube-proxy, controller-manager, scheduler), then mounts below its folder
// (container root file systems, pod volumes, pod network namespaces), then
// cgroups, network namespaces, the bridge, container log links. Every step
// tolerates what is already gone, so it serves a half-built environment, a
// stopped one and a crashed run's leftovers alike.
func teardown(st slotState) []error {
	var errs []error
	if err := killProcesses(st); err != nil {
		errs = append(errs, err)
	}
	if err := unmountBelow(st.Dir); err != nil {
		errs = append(errs, err)
	}
	for _, root := range st.CgroupRoots {
		if err := removeCgroup(root); err != nil {
			errs = append(errs, err)
		}
	}
	for _, ns := range st.Netns {
		if _, err := os.Stat(netnsPath(ns)); err == nil {
			if err := run("ip", "netns", "delete", ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if st.Bridge != "" {
		if err := exec.Command("ip", "link", "show", st.Bridge).Run(); err == nil {
			if err := run("ip", "link", "delete", st.Bridge); err != nil {
				errs = append(errs, err)
			}
		}
	}
	removeLogLinks(st.Dir)
	return errs
}

// killProcesses kills, until none is left: every process in a node's network
// namespace or below a node's cgroup root, and every one of ourBinaries whose
// command line names a path below the environment's folder (the shims, which
// outlive containerd by design, and the control-plane processes on the host).
func killProcesses(st slotState) error {
	self := os.Getpid()
	var last []int
	for attempt := 0; attempt < 100; attempt++ {
		pids := map[int]bool{}
		for _, ns := range st.Netns {
			if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
				for _, f := range strings.Fields(string(out)) {
					if pid, err := strconv.Atoi(f); err == nil {
						pids[pid] = true
					}
				}
			}
		}
		for _, root := range st.CgroupRoots {
			for _, pid := range cgroupProcs(root) {
				pids[pid] = true
			}
		}
		for _, pid := range processesNaming(st.Dir) {
			pids[pid] = true
		}
		delete(pids, self)
		if len(pids) == 0 {
			return nil
		}
		last = last[:0]
		for pid := range pids {
			last = append(last, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("processes still alive after 5 s of SIGKILL: %v", last)
}

// cgroupProcs lists the processes below root in any cgroup v1 hierarchy.
func cgroupProcs(root string) []int {
	var pids []int
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		_ = filepath.WalkDir(filepath.Join(h, root), func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			raw, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			for _, f := range strings.Fields(string(raw)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

func processesNaming(dir string) []int {
	if dir == "" {
		return nil
	}
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil || !ourBinaries[filepath.Base(strings.TrimSuffix(exe, " (deleted)"))] {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(raw), dir+"/") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// unmountBelow detaches every mount point below dir, deepest first.
func unmountBelow(dir string) error {
	if dir == "" {
		return nil
	}
	for attempt := 0; attempt < 10; attempt++ {
		points, err := mountPointsBelow(dir)
		if err != nil {
			return err
		}
		if len(points) == 0 {
			return nil
		}
		sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
		for _, p := range points {
			if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				log.Printf("teardown: unmount %s: %v", p, err)
			}
		}
	}
	points, _ := mountPointsBelow(dir)
	if len(points) > 0 {
		return fmt.Errorf("still mounted below %s: %v", dir, points)
	}
	return nil
}

func mountPointsBelow(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMountPath(fields[4])
		if strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	return points, sc.Err()
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeCgroup removes root and everything below it in every hierarchy,
// deepest first (a cgroup is removed with rmdir, once it has no processes).
func removeCgroup(root string) error {
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	var failed []string
	for _, h := range hierarchies {
		top := filepath.Join(h, root)
		var dirs []string
		_ = filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			var err error
			for try := 0; try < 20; try++ {
				if err = unix.Rmdir(d); err == nil || errors.Is(err, unix.ENOENT) {
					err = nil
					break
				}
				// A killed process leaves its cgroup a moment after it dies.
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", d, err))
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("remove cgroups: %s", strings.Join(failed, "; "))
	}
	return nil
}

// removeLogLinks removes kubelet's links in /var/log/containers that point
// below dir (kubelet keeps that folder whatever its configuration says).
func removeLogLinks(dir string) {
	if dir == "" {
		return
	}
	entries, _ := os.ReadDir("/var/log/containers")
	for _, e := range entries {
		p := filepath.Join("/var/log/containers", e.Name())
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, dir+"/") {
			_ = os.Remove(p)
		}
	}
}
