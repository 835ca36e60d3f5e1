package main

import (
	"context"
	"time"
)

// leaseReturnTimeout bounds handing back this replica's leases at
// shutdown; the context that ran the crawler is already cancelled then.
const leaseReturnTimeout = 5 * time.Second

// runCrawler runs the crawler until ctx ends, then hands back the leases
// it still holds: agents it had claimed but not started, and those whose
// checks shutdown cut short. The other replicas then take them at their
// next claim instead of after the lease expires; a replica killed without
// this step leaves them to expiry.
func (a *app) runCrawler(ctx context.Context) error {
	err := a.crawler.Run(ctx)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseReturnTimeout)
	defer cancel()
	owner := a.crawler.Config().Owner
	n, rerr := a.store.ReleaseLeases(rctx, owner, "")
	switch {
	case rerr != nil:
		a.log.Warn("returning leases at shutdown; other replicas take them when they expire", "err", rerr)
	case n > 0:
		a.log.Info("returned leases at shutdown", "agents", n, "owner", owner)
	}
	return err
}
