package verify

import (
	"os"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// benchVector returns a typical JS-SDK-signed card (two interfaces, two
// skills, a bearer scheme; about 1.2 KB) and its pinned keys.
func benchVector(b *testing.B, name string) ([]byte, StaticKeys) {
	data, err := os.ReadFile("testdata/jssdk_vectors.json")
	if err != nil {
		b.Fatal(err)
	}
	vf := loadVectors(&testing.T{}, data)
	keys, err := ParseJWKS(vf.JWKS)
	if err != nil {
		b.Fatal(err)
	}
	var pinned StaticKeys
	for _, k := range keys {
		pinned = append(pinned, PinnedKey{KID: k.KeyID, Key: k, Origins: []string{"*"}})
	}
	for _, v := range vf.Vectors {
		if v.Name == name {
			return v.Card, pinned
		}
	}
	b.Fatalf("no vector %s", name)
	return nil, nil
}

// BenchmarkVerifyCard is the whole check of one signed card: decode,
// canonicalize, header parse, key lookup, signature.
func BenchmarkVerifyCard(b *testing.B) {
	for _, name := range []string{"typical/ES256", "typical/RS256", "typical/EdDSA"} {
		b.Run(name, func(b *testing.B) {
			raw, keys := benchVector(b, name)
			v := New(Options{Keys: keys})
			b.ReportAllocs()
			for b.Loop() {
				if rep := v.VerifySignatures(b.Context(), raw, nil); rep.Status != StatusVerified {
					b.Fatal(rep.Status)
				}
			}
		})
	}
}

// BenchmarkBareSignature is the ceiling: the signature check alone on the
// same payload bytes, everything else precomputed.
func BenchmarkBareSignature(b *testing.B) {
	for _, name := range []string{"typical/ES256", "typical/RS256", "typical/EdDSA"} {
		b.Run(name, func(b *testing.B) {
			raw, keys := benchVector(b, name)
			tree, err := decodeStrict(raw)
			if err != nil {
				b.Fatal(err)
			}
			top := tree.(map[string]any)
			payload, _, err := newPayloads(top).build(forms[0])
			if err != nil {
				b.Fatal(err)
			}
			sig := top["signatures"].([]any)[0].(map[string]any)
			jws, err := jose.ParseDetached(sig["protected"].(string)+".."+sig["signature"].(string), []byte{}, acceptedAlgs)
			if err != nil {
				b.Fatal(err)
			}
			h, _ := parseHeader(sig["protected"].(string), nil)
			pk, _ := keys.PinnedKeys(b.Context(), h.kid)
			b.ReportAllocs()
			for b.Loop() {
				if err := jws.DetachedVerify(payload, pk[0].Key.Key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCanonicalize is decoding plus building the form that verifies.
func BenchmarkCanonicalize(b *testing.B) {
	raw, _ := benchVector(b, "typical/ES256")
	b.ReportAllocs()
	for b.Loop() {
		tree, err := decodeStrict(raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := newPayloads(tree.(map[string]any)).build(forms[0]); err != nil {
			b.Fatal(err)
		}
	}
}
