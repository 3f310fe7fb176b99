// Command kindnetd is the node network agent of Signet's kind node image, written for Signet's
// tests because kind's own kindnetd is not served by the Go module proxy. On every node (a
// host-network DaemonSet with NET_ADMIN) it
//   - writes the CNI configuration for the node's Pod CIDR: ptp veth pairs with host-local
//     addresses, masquerading traffic that leaves the node's Pod CIDR, and portmap;
//   - keeps a route to every other node's Pod CIDR through that node's InternalIP, so Pods
//     (and the API server, for webhooks) reach Pods on other nodes, and marks the addresses of
//     its own Pod CIDR that no Pod has unreachable.
//
// It re-reads the Node objects every few seconds: a kind cluster has a handful of nodes.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	cniConfigPath  = "/etc/cni/net.d/10-kindnet.conflist"
	resyncPeriod   = 5 * time.Second
	requestTimeout = 10 * time.Second
)

func main() {
	nodeName := os.Getenv("NODE_NAME")
	if nodeName == "" {
		log.Fatal("NODE_NAME is not set (the DaemonSet passes spec.nodeName)")
	}
	config, err := rest.InClusterConfig()
	if err != nil {
		log.Fatalf("in-cluster configuration: %v", err)
	}
	// kind passes the API server's address on the node network: Services need kube-proxy, and
	// kube-proxy's rules may not exist yet when the network agent starts.
	if endpoint := os.Getenv("CONTROL_PLANE_ENDPOINT"); endpoint != "" {
		config.Host = "https://" + endpoint
	}
	config.Timeout = requestTimeout
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		log.Fatalf("Kubernetes client: %v", err)
	}
	log.Printf("kindnetd on node %s, API server %s", nodeName, config.Host)
	for {
		if err := sync(client, nodeName); err != nil {
			log.Printf("sync failed (retrying in %s): %v", resyncPeriod, err)
		}
		time.Sleep(resyncPeriod)
	}
}

func sync(client kubernetes.Interface, nodeName string) error {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		cidrs := podCIDRs(node)
		if len(cidrs) == 0 {
			continue
		}
		if node.Name == nodeName {
			if err := writeCNIConfig(cidrs); err != nil {
				return err
			}
			if err := unreachableOwnCIDR(cidrs); err != nil {
				return err
			}
			continue
		}
		if err := routeToNode(node, cidrs); err != nil {
			return err
		}
	}
	return nil
}

func podCIDRs(node *corev1.Node) []string {
	if len(node.Spec.PodCIDRs) > 0 {
		return node.Spec.PodCIDRs
	}
	if node.Spec.PodCIDR != "" {
		return []string{node.Spec.PodCIDR}
	}
	return nil
}

func internalIP(node *corev1.Node, ipv4 bool) net.IP {
	for _, address := range node.Status.Addresses {
		if address.Type != corev1.NodeInternalIP {
			continue
		}
		ip := net.ParseIP(address.Address)
		if ip != nil && (ip.To4() != nil) == ipv4 {
			return ip
		}
	}
	return nil
}

func routeToNode(node *corev1.Node, cidrs []string) error {
	for _, cidr := range cidrs {
		_, destination, err := net.ParseCIDR(cidr)
		if err != nil {
			return fmt.Errorf("node %s has an invalid Pod CIDR %q: %w", node.Name, cidr, err)
		}
		gateway := internalIP(node, destination.IP.To4() != nil)
		if gateway == nil {
			continue
		}
		route := &netlink.Route{Dst: destination, Gw: gateway}
		existing, err := netlink.RouteListFiltered(netlink.FAMILY_ALL, route, netlink.RT_FILTER_DST)
		if err == nil && len(existing) == 1 && existing[0].Gw.Equal(gateway) {
			continue
		}
		if err := netlink.RouteReplace(route); err != nil {
			return fmt.Errorf("route %s via %s (node %s): %w", cidr, gateway, node.Name, err)
		}
		log.Printf("route %s via %s (node %s)", cidr, gateway, node.Name)
	}
	return nil
}

// unreachableOwnCIDR answers packets for addresses of this node's Pod CIDR that no Pod has (a Pod
// that just ended) with "unreachable" instead of sending them to the default gateway, off the
// cluster. Each Pod's own /32 route (added by ptp) is more specific and wins.
func unreachableOwnCIDR(cidrs []string) error {
	for _, cidr := range cidrs {
		_, destination, err := net.ParseCIDR(cidr)
		if err != nil {
			return fmt.Errorf("own Pod CIDR %q: %w", cidr, err)
		}
		route := &netlink.Route{Dst: destination, Type: unix.RTN_UNREACHABLE}
		existing, err := netlink.RouteListFiltered(netlink.FAMILY_ALL, route, netlink.RT_FILTER_DST|netlink.RT_FILTER_TYPE)
		if err == nil && len(existing) > 0 {
			continue
		}
		if err := netlink.RouteReplace(route); err != nil {
			return fmt.Errorf("unreachable route for %s: %w", cidr, err)
		}
		log.Printf("route unreachable %s (addresses of this node no Pod has)", cidr)
	}
	return nil
}

type cniRange struct {
	Subnet string `json:"subnet"`
}

func writeCNIConfig(cidrs []string) error {
	ranges := make([][]cniRange, 0, len(cidrs))
	routes := make([]map[string]string, 0, len(cidrs))
	for _, cidr := range cidrs {
		ip, _, err := net.ParseCIDR(cidr)
		if err != nil {
			return fmt.Errorf("own Pod CIDR %q: %w", cidr, err)
		}
		ranges = append(ranges, []cniRange{{Subnet: cidr}})
		if ip.To4() != nil {
			routes = append(routes, map[string]string{"dst": "0.0.0.0/0"})
		} else {
			routes = append(routes, map[string]string{"dst": "::/0"})
		}
	}
	config := map[string]any{
		"cniVersion": "0.4.0",
		"name":       "kindnet",
		"plugins": []any{
			map[string]any{
				"type":   "ptp",
				"ipMasq": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": "/run/cni-ipam-state",
					"routes":  routes,
					"ranges":  ranges,
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	content, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return err
	}
	if current, err := os.ReadFile(cniConfigPath); err == nil && bytes.Equal(current, content) {
		return nil
	}
	temporary := filepath.Join(filepath.Dir(cniConfigPath), ".10-kindnet.conflist.tmp")
	if err := os.WriteFile(temporary, content, 0o644); err != nil {
		return fmt.Errorf("write CNI configuration: %w", err)
	}
	if err := os.Rename(temporary, cniConfigPath); err != nil {
		return fmt.Errorf("install CNI configuration: %w", err)
	}
	log.Printf("wrote %s for %v", cniConfigPath, cidrs)
	return nil
}
