// Command kindnetd is the node network agent of Signet's kind node image, written for Signet's
// tests because kind's own kindnetd is not served by the Go module proxy. On every node (a
// host-network DaemonSet with NET_ADMIN) it
//   - writes the CNI configuration for the node's Pod CIDR: ptp veth pairs with host-local
//     addresses, masquerading only traffic that leaves the cluster's Pod subnet (POD_SUBNET, as
//     kind's kindnetd: Pod-to-Pod traffic keeps its source address, so NetworkPolicy peers that
//     select Pods or namespaces, and ipBlocks of node addresses, mean what they say), and portmap;
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
	"strings"
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
	clusterSubnets, err := parseSubnets(os.Getenv("POD_SUBNET"))
	if err != nil {
		log.Fatalf("POD_SUBNET: %v", err)
	}
	log.Printf("kindnetd on node %s, API server %s, cluster Pod subnet %v", nodeName, config.Host, clusterSubnets)
	for {
		if err := sync(client, nodeName, clusterSubnets); err != nil {
			log.Printf("sync failed (retrying in %s): %v", resyncPeriod, err)
		}
		time.Sleep(resyncPeriod)
	}
}

// parseSubnets reads kind's networking.podSubnet ("10.244.0.0/16", or one CIDR per family,
// comma-separated): the cluster's Pod addresses, every node's Pod CIDR inside one of them.
func parseSubnets(value string) ([]*net.IPNet, error) {
	var subnets []*net.IPNet
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		_, subnet, err := net.ParseCIDR(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR: %w", part, err)
		}
		subnets = append(subnets, subnet)
	}
	if len(subnets) == 0 {
		return nil, fmt.Errorf("not set (the DaemonSet passes kind's networking.podSubnet)")
	}
	return subnets, nil
}

func sync(client kubernetes.Interface, nodeName string, clusterSubnets []*net.IPNet) error {
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
			if err := writeCNIConfig(cidrs, clusterSubnets); err != nil {
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

// cniRange is one host-local range: the node's Pod CIDR inside the cluster's Pod subnet. The
// subnet (not the node's CIDR) is the Pod address's prefix, so ptp's ipMasq leaves traffic to
// every Pod of the cluster alone and masquerades only what leaves it.
type cniRange struct {
	Subnet     string `json:"subnet"`
	RangeStart string `json:"rangeStart"`
	RangeEnd   string `json:"rangeEnd"`
	Gateway    string `json:"gateway"`
}

func writeCNIConfig(cidrs []string, clusterSubnets []*net.IPNet) error {
	ranges := make([][]cniRange, 0, len(cidrs))
	routes := make([]map[string]string, 0, len(cidrs))
	for _, cidr := range cidrs {
		_, nodeCIDR, err := net.ParseCIDR(cidr)
		if err != nil {
			return fmt.Errorf("own Pod CIDR %q: %w", cidr, err)
		}
		subnet := containing(clusterSubnets, nodeCIDR)
		if subnet == nil {
			return fmt.Errorf("own Pod CIDR %s is in no cluster Pod subnet %v", cidr, clusterSubnets)
		}
		first, last := usable(nodeCIDR)
		ranges = append(ranges, []cniRange{{
			Subnet:     subnet.String(),
			RangeStart: next(first).String(),
			RangeEnd:   last.String(),
			Gateway:    first.String(),
		}})
		if nodeCIDR.IP.To4() != nil {
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

// containing is the cluster subnet of the same family that holds all of nodeCIDR.
func containing(subnets []*net.IPNet, nodeCIDR *net.IPNet) *net.IPNet {
	nodeOnes, nodeBits := nodeCIDR.Mask.Size()
	for _, subnet := range subnets {
		ones, bits := subnet.Mask.Size()
		if bits == nodeBits && ones <= nodeOnes && subnet.Contains(nodeCIDR.IP) {
			return subnet
		}
	}
	return nil
}

// usable is the node CIDR's first address after the network address (the gateway, on the host
// side of every veth) and its last address before the broadcast address (IPv4) or end (IPv6).
func usable(cidr *net.IPNet) (net.IP, net.IP) {
	network := cidr.IP.Mask(cidr.Mask)
	last := make(net.IP, len(network))
	for i := range network {
		last[i] = network[i] | ^cidr.Mask[i]
	}
	if network.To4() != nil {
		last = previous(last)
	}
	return next(network), last
}

func next(ip net.IP) net.IP {
	out := append(net.IP(nil), ip...)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]++
		if out[i] != 0 {
			break
		}
	}
	return out
}

func previous(ip net.IP) net.IP {
	out := append(net.IP(nil), ip...)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]--
		if out[i] != 0xff {
			break
		}
	}
	return out
}
