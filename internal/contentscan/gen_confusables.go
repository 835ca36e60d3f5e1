//go:build ignore

// gen_confusables turns the Unicode confusables.txt (UTS #39) on standard
// input into the compact table skeleton.go embeds: the header below, then
// one "SOURCE<TAB>TARGET..." line per mapping, in file order.
package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var version, date string
	var rows []string
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if v, ok := strings.CutPrefix(line, "# Version: "); ok {
			version = v
		}
		if v, ok := strings.CutPrefix(line, "# Date: "); ok {
			date, _, _ = strings.Cut(v, ",")
		}
		line, _, _ = strings.Cut(line, "#")
		cols := strings.Split(line, ";")
		if len(cols) < 3 {
			continue
		}
		rows = append(rows, strings.TrimSpace(cols[0])+"\t"+strings.TrimSpace(cols[1]))
	}
	fmt.Printf("# Derived from the Unicode confusables.txt (UTS #39 Unicode Security Mechanisms),\n")
	fmt.Printf("# Version: %s, Date: %s, SHA-256 of the source file:\n# %x\n", version, date, sha256.Sum256(raw))
	fmt.Printf("# © Unicode®, Inc. For terms of use and license, see\n# https://www.unicode.org/terms_of_use.html\n")
	fmt.Printf("# Only the mapping columns are kept: source code point, then the target\n# code points (prototype). Regenerate with: go run gen_confusables.go < confusables.txt > this file\n")
	for _, r := range rows {
		fmt.Println(r)
	}
}
