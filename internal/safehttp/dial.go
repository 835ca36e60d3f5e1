package safehttp

import (
	"context"
	"net"
)

// DialContext opens a TCP connection under the client's address policy and
// dial timeout, for protocols that do not go through net/http (gRPC
// probes and proxied gRPC calls). Like the HTTP transport, it checks every
// resolved address in the dialer's Control hook, so a refused address
// fails with ErrBlockedAddress before any packet is sent. Proxy settings
// from the environment are ignored here too.
func (c *Client) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return dial(ctx, policy{allow: c.cfg.AllowNetworks}, c.cfg.DialTimeout, network, addr)
}
