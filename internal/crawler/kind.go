package crawler

// Kinds of registration failure: what a Problem amounts to for whoever
// asked to register (the JSON API answers with them as error codes, the
// console shows them beside each URL), while Class says precisely what
// went wrong.
const (
	// KindInvalidURL: the input is not a URL the registry can fetch.
	KindInvalidURL = "invalid_url"
	// KindBlockedAddress: the host resolves to an address the outbound
	// rules refuse, the registry's own among them (class self).
	KindBlockedAddress = "blocked_address"
	// KindInvalidCard: a document arrived but is not an agent card.
	KindInvalidCard = "invalid_card"
	// KindFetchFailed: every other failure to fetch the card.
	KindFetchFailed = "fetch_failed"
)

// Kind is the kind of registration failure p is.
func (p Problem) Kind() string {
	switch p.Class {
	case ClassNotACard:
		return KindInvalidCard
	case ClassInvalidURL:
		return KindInvalidURL
	case ClassBlockedAddress, ClassSelf:
		return KindBlockedAddress
	}
	return KindFetchFailed
}

// Advice is p's message with what the reader can do about it, when there
// is something: a blocked range is the operator's to open (the registry
// itself is not, so it gets no such advice).
func (p Problem) Advice() string {
	if p.Class == ClassBlockedAddress {
		return p.Message + "; an operator can allow the range with --allow-networks (REGISTRY_ALLOW_NETWORKS)"
	}
	return p.Message
}
