package main

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
)

// Each kube-apiserver watches its certificate and CA files with inotify (about six instances each,
// counted on this test environment), and fs.inotify.max_user_instances is 128 on Debian: past about
// 20 clusters the API servers quietly fall back, but Cluster API's manager, started last, fails with
// "too many open files". kind's documentation gives the same advice for many clusters on one host:
// raise the limit. Done here, as root, only upwards, and said in the log; where it cannot be raised
// the caller warns and goes on (a few clusters fit the default).
const inotifyInstancesPerCluster = 8

const inotifyInstancesPath = "/proc/sys/fs/inotify/max_user_instances"

func ensureInotifyInstances(clusters int) error {
	// The rest of the host (and Cluster API's manager) keeps 64.
	want := clusters*inotifyInstancesPerCluster + 64
	raw, err := os.ReadFile(inotifyInstancesPath)
	if err != nil {
		return fmt.Errorf("read %s: %w", inotifyInstancesPath, err)
	}
	have, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return fmt.Errorf("parse %s (%q): %w", inotifyInstancesPath, raw, err)
	}
	if have >= want {
		return nil
	}
	if err := os.WriteFile(inotifyInstancesPath, []byte(strconv.Itoa(want)), 0o644); err != nil {
		return fmt.Errorf("%d clusters need about %d inotify instances, %s is %d and could not be raised (run as root, or sysctl fs.inotify.max_user_instances=%d): %w",
			clusters, want, inotifyInstancesPath, have, want, err)
	}
	log.Printf("raised fs.inotify.max_user_instances from %d to %d for %d clusters", have, want, clusters)
	return nil
}
