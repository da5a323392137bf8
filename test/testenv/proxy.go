package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"sync"
)

// stableProxy keeps one 127.0.0.1 port for a cluster across restarts of its
// API server, which picks a new port each time it starts. While the API
// server is stopped the port is closed, so clients see "connection refused"
// exactly as with a real control plane that is down.
//
// With nodes it listens on the host's address on the nodes' bridge too, the
// same port, so that kubelets and pods reach the API server.
type stableProxy struct {
	port  int
	hosts []string

	// The 127.0.0.1 listener taken when the port was chosen, kept until the first open: every cluster's
	// port is chosen before any API server starts, and a port closed after choosing it could be handed
	// out again (to another cluster's proxy, or to an API server's own random port) before its open.
	reserved net.Listener

	mu      sync.Mutex
	lns     []net.Listener
	backend int
	conns   map[net.Conn]struct{}
}

func newStableProxy() (*stableProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := newProxyAt(ln.Addr().(*net.TCPAddr).Port, "127.0.0.1")
	p.reserved = ln
	return p, nil
}

func newProxyAt(port int, hosts ...string) *stableProxy {
	return &stableProxy{port: port, hosts: hosts, conns: map[net.Conn]struct{}{}}
}

func (p *stableProxy) open(backend int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lns != nil {
		return nil
	}
	for _, host := range p.hosts {
		var ln net.Listener
		var err error
		if host == "127.0.0.1" && p.reserved != nil {
			ln, p.reserved = p.reserved, nil
		} else {
			ln, err = net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(p.port)))
		}
		if err != nil {
			for _, l := range p.lns {
				l.Close()
			}
			p.lns = nil
			return err
		}
		p.lns = append(p.lns, ln)
		go p.accept(ln, backend)
	}
	p.backend = backend
	return nil
}

func (p *stableProxy) accept(ln net.Listener, backend int) {
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		go p.relay(client, backend)
	}
}

func (p *stableProxy) relay(client net.Conn, backend int) {
	server, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", backend))
	if err != nil {
		// The client sees only its connection closed (before TLS, for an https client): say why here.
		log.Printf("stable port %d: dial the API server at 127.0.0.1:%d: %v", p.port, backend, err)
		client.Close()
		return
	}
	if !p.track(client, server) {
		client.Close()
		server.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	<-done
	client.Close()
	server.Close()
	p.untrack(client, server)
}

func (p *stableProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lns == nil {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *stableProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// shut closes the port and cuts every open connection, as a dying API
// server would: watches end and clients have to reconnect.
func (p *stableProxy) shut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reserved != nil {
		p.reserved.Close()
		p.reserved = nil
	}
	for _, ln := range p.lns {
		ln.Close()
	}
	p.lns = nil
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *stableProxy) close() { p.shut() }
