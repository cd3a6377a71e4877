// SPDX-License-Identifier: BSD-2-Clause
//
// profile_check: would Pyroscope take this profile?  It decodes a pprof
// profile (gzipped or not) with google.golang.org/protobuf against pprof's
// own profile.proto (Debian's golang-github-google-pprof-dev; a descriptor
// set protoc made from it: -desc), strictly:
// a proto3 string that is not valid UTF-8 fails the decode, as it fails
// Pyroscope's.  Then it applies the rules of Pyroscope's ingestion, read
// from grafana/pyroscope's pkg/validation/validate.go (ValidateProfile,
// ValidateLabels) and pkg/model/pprofsplit (which sample labels become
// series labels), with Pyroscope's default limits (limits.go):
//
//   - at least one sample type, none of whose names holds '-';
//   - at most -max-samples samples (max_profile_stacktrace_samples, 16000)
//     and -max-bytes bytes of protobuf (max_profile_size_bytes, 4 MiB);
//   - each sample: one value per sample type, at most 100 labels
//     (max_profile_stacktrace_sample_labels);
//   - no location or function with id 0; string_table[0] == ""; every
//     string index in range (and, stricter than Pyroscope, every location,
//     mapping and function id a sample or line refers to exists);
//   - every string valid UTF-8;
//   - each sample's string labels, the series labels pprofsplit makes of
//     them: names valid Prometheus label names (dots allowed, Pyroscope
//     turns them into '_'), at most 1024 bytes; values valid UTF-8, at
//     most 2048 bytes; no name twice; with the target's own labels
//     (-series-labels) at most 30 names (max_label_names_per_series).
//
// And what profd promises beyond that: no numeric label (pprofsplit drops
// them, so pid and tid would never reach Pyroscope), no label with an empty
// key or value, and no control character in any string (-printable).
//
// Usage: profile_check -desc profile.desc [-max-samples N] [-max-bytes N]
//        [-comment TEXT]... [-dump] FILE...
// Exit 0 when every file passes; 1 with one line per violation otherwise.
// -dump prints the strings a test wants to look at: "mapping: FILE",
// "function: NAME FILE", "label: KEY=VALUE", "comment: TEXT".
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

var (
	descPath     = flag.String("desc", "", "descriptor set of profile.proto (protoc --descriptor_set_out)")
	maxSamples   = flag.Int("max-samples", 16000, "samples a profile may hold (0: any)")
	maxBytes     = flag.Int("max-bytes", 4<<20, "bytes of uncompressed protobuf (0: any)")
	seriesLabels = flag.Int("series-labels", 4, "labels the target adds to each series (service_name, __name__, ...)")
	printable    = flag.Bool("printable", true, "fail on control characters in strings")
	dump         = flag.Bool("dump", false, "print mappings, functions, labels and comments")
	comments     listFlag
)

// Prometheus' legacy label names, which Pyroscope accepts once it has
// turned dots into underscores (SanitizeLegacyLabelName).
var labelName = regexp.MustCompile(`^[a-zA-Z_.][a-zA-Z0-9_.]*$`)

type checker struct {
	file string
	errs []string
}

func (c *checker) failf(format string, args ...interface{}) {
	if len(c.errs) < 50 {
		c.errs = append(c.errs, fmt.Sprintf("%s: %s", c.file, fmt.Sprintf(format, args...)))
	}
}

// Field access on the dynamic message, by name.
func field(m protoreflect.Message, name string) protoreflect.Value {
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic("no field " + name)
	}
	return m.Get(fd)
}
func i64(m protoreflect.Message, name string) int64  { return field(m, name).Int() }
func u64(m protoreflect.Message, name string) uint64 { return field(m, name).Uint() }
func list(m protoreflect.Message, name string) protoreflect.List {
	return field(m, name).List()
}

func loadDesc(path string) protoreflect.MessageDescriptor {
	raw, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile_check:", err)
		os.Exit(2)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		fmt.Fprintln(os.Stderr, "profile_check: descriptor set:", err)
		os.Exit(2)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile_check: descriptor set:", err)
		os.Exit(2)
	}
	d, err := files.FindDescriptorByName("perftools.profiles.Profile")
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile_check:", err)
		os.Exit(2)
	}
	return d.(protoreflect.MessageDescriptor)
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

func (c *checker) check(md protoreflect.MessageDescriptor, data []byte) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err == nil {
			data, err = io.ReadAll(zr)
		}
		if err != nil {
			c.failf("gzip: %v", err)
			return
		}
	}
	msg := dynamicpb.NewMessage(md)
	// Strict: proto3 strings must be valid UTF-8, unknown fields are kept.
	if err := (proto.UnmarshalOptions{}).Unmarshal(data, msg); err != nil {
		c.failf("malformed_profile: protobuf decode: %v", err)
		return
	}
	p := msg.ProtoReflect()

	strs := list(p, "string_table")
	nstr := int64(strs.Len())
	str := func(what string, i int64) string {
		if i < 0 || i >= nstr {
			c.failf("malformed_profile: %s string index %d out of range (%d strings)", what, i, nstr)
			return ""
		}
		return strs.Get(int(i)).String()
	}
	if nstr == 0 || strs.Get(0).String() != "" {
		c.failf(`malformed_profile: string 0 should be empty string`)
	}
	for i := 0; i < strs.Len(); i++ {
		s := strs.Get(i).String()
		if !utf8.ValidString(s) {
			c.failf("malformed_profile: invalid utf8 string %d: %q", i, s)
		}
		if *printable && hasControl(s) {
			c.failf("string %d holds a control character: %q", i, s)
		}
	}

	types := list(p, "sample_type")
	if types.Len() == 0 {
		c.failf("malformed_profile: empty profile (no sample type)")
	}
	for i := 0; i < types.Len(); i++ {
		t := str("sample type", i64(types.Get(i).Message(), "type"))
		if strings.Contains(t, "-") {
			c.failf("malformed_profile: sample type %q contains -", t)
		}
	}

	samples := list(p, "sample")
	if *maxSamples != 0 && samples.Len() > *maxSamples {
		c.failf("samples_limit: %d samples, limit %d (max_profile_stacktrace_samples)",
			samples.Len(), *maxSamples)
	}
	if *maxBytes != 0 && len(data) > *maxBytes {
		c.failf("profile_size_limit: %d bytes, limit %d (max_profile_size_bytes)", len(data), *maxBytes)
	}

	mappings := map[uint64]bool{}
	for i, ms := 0, list(p, "mapping"); i < ms.Len(); i++ {
		m := ms.Get(i).Message()
		mappings[u64(m, "id")] = true
		file := str("mapping filename", i64(m, "filename"))
		str("mapping build id", i64(m, "build_id"))
		if *dump {
			fmt.Printf("mapping: %s\n", file)
		}
	}
	functions := map[uint64]bool{}
	for i, fs := 0, list(p, "function"); i < fs.Len(); i++ {
		f := fs.Get(i).Message()
		if u64(f, "id") == 0 {
			c.failf("malformed_profile: function id is 0")
		}
		functions[u64(f, "id")] = true
		name := str("function name", i64(f, "name"))
		str("function system name", i64(f, "system_name"))
		file := str("function file name", i64(f, "filename"))
		if *dump {
			fmt.Printf("function: %s %s\n", name, file)
		}
	}
	locations := map[uint64]bool{}
	for i, ls := 0, list(p, "location"); i < ls.Len(); i++ {
		l := ls.Get(i).Message()
		if u64(l, "id") == 0 {
			c.failf("malformed_profile: location id is 0")
		}
		locations[u64(l, "id")] = true
		if mid := u64(l, "mapping_id"); mid != 0 && !mappings[mid] {
			c.failf("location %d: no mapping %d", u64(l, "id"), mid)
		}
		for j, lines := 0, list(l, "line"); j < lines.Len(); j++ {
			if fid := u64(lines.Get(j).Message(), "function_id"); !functions[fid] {
				c.failf("location %d: no function %d", u64(l, "id"), fid)
			}
		}
	}

	dumped := map[string]bool{}
	for i := 0; i < samples.Len(); i++ {
		s := samples.Get(i).Message()
		if n := list(s, "value").Len(); n != types.Len() {
			c.failf("malformed_profile: sample %d has %d values for %d sample types", i, n, types.Len())
		}
		for j, ids := 0, list(s, "location_id"); j < ids.Len(); j++ {
			if id := ids.Get(j).Uint(); !locations[id] {
				c.failf("sample %d: no location %d", i, id)
			}
		}
		labels := list(s, "label")
		if labels.Len() > 100 {
			c.failf("sample_labels_limit: sample %d has %d labels, limit 100", i, labels.Len())
		}
		names := map[string]bool{}
		for j := 0; j < labels.Len(); j++ {
			l := labels.Get(j).Message()
			key := str("label key", i64(l, "key"))
			val := str("label value", i64(l, "str"))
			str("label unit", i64(l, "num_unit"))
			switch {
			case key == "":
				c.failf("sample %d: label with an empty key", i)
			case i64(l, "str") == 0 && (i64(l, "num") != 0 || i64(l, "num_unit") != 0):
				c.failf("sample %d: numeric label %s=%d: Pyroscope's pprofsplit drops it", i, key, i64(l, "num"))
			case val == "":
				c.failf("sample %d: label %s with an empty value", i, key)
			case !labelName.MatchString(key):
				c.failf("invalid_labels: sample %d: label name %q", i, key)
			case len(key) > 1024:
				c.failf("label_name_too_long: sample %d: %q", i, key)
			case len(val) > 2048:
				c.failf("label_value_too_long: sample %d: %s is %d bytes", i, key, len(val))
			case names[key]:
				c.failf("duplicate_label_names: sample %d: %s twice", i, key)
			}
			names[key] = true
			if *dump && !dumped[key+"="+val] {
				dumped[key+"="+val] = true
				fmt.Printf("label: %s=%s\n", key, val)
			}
		}
		if n := len(names) + *seriesLabels; n > 30 {
			c.failf("max_label_names_per_series: sample %d makes a series of %d label names, limit 30", i, n)
		}
	}

	var have []string
	for i, cs := 0, list(p, "comment"); i < cs.Len(); i++ {
		have = append(have, str("comment", cs.Get(i).Int()))
	}
	for _, want := range comments {
		found := false
		for _, h := range have {
			found = found || strings.Contains(h, want)
		}
		if !found {
			c.failf("no comment contains %q", want)
		}
	}
	if *dump {
		for _, h := range have {
			fmt.Printf("comment: %s\n", h)
		}
	}
	if len(c.errs) == 0 {
		fmt.Printf("ok: %s: %d samples, %d bytes, %d strings\n", c.file, samples.Len(), len(data), nstr)
	}
}

func main() {
	flag.Var(&comments, "comment", "a comment must contain this text (repeatable)")
	flag.Parse()
	if *descPath == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: profile_check -desc profile.desc [options] FILE...")
		os.Exit(2)
	}
	md := loadDesc(*descPath)
	bad := false
	for _, f := range flag.Args() {
		c := &checker{file: f}
		data, err := os.ReadFile(f)
		if err != nil {
			c.failf("%v", err)
		} else {
			c.check(md, data)
		}
		for _, e := range c.errs {
			fmt.Println("FAIL:", e)
		}
		bad = bad || len(c.errs) > 0
	}
	if bad {
		os.Exit(1)
	}
}
