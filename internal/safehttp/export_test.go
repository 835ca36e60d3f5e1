package safehttp

// ReservedName tells whether host lies in a domain reserved for
// documentation, testing or as invalid (RFC 2606, RFC 6761), for the
// package's external tests.
func ReservedName(host string) bool {
	_, ok := reservedDomain(host)
	return ok
}
