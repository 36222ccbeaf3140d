//go:build tools

// Package coredns pins the CoreDNS that kubeadm v1.36.3 deploys (v1.14.2),
// built from its Go module for the kind node image.
package coredns

import _ "github.com/coredns/coredns"
