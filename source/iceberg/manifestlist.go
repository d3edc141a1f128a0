package iceberg

import (
	"bytes"
	"fmt"
	"io"

	ice "github.com/apache/iceberg-go"
)

// readManifestList reads a manifest list with iceberg-go; a list whose writer
// schema iceberg-go cannot resolve against its own (BigQuery makes every field a
// nullable union) is read field by field from its own schema instead.
func readManifestList(f io.ReadSeeker) ([]ice.ManifestFile, error) {
	list, err := iceManifestList(f)
	if err == nil {
		return list, nil
	}
	if _, serr := f.Seek(0, io.SeekStart); serr != nil {
		return nil, err
	}
	if list, ferr := readLooseManifestList(f); ferr == nil {
		return list, nil
	}
	return nil, err
}

// iceManifestList is iceberg-go's decoder, its panics made errors.
func iceManifestList(f io.Reader) (list []ice.ManifestFile, err error) {
	defer func() {
		if r := recover(); r != nil {
			list, err = nil, fmt.Errorf("invalid manifest list: %v", r)
		}
	}()
	return ice.ReadManifestList(f)
}

// readLooseManifestList decodes a manifest list generically, by field name.
func readLooseManifestList(f io.Reader) ([]ice.ManifestFile, error) {
	b, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxManifest {
		return nil, fmt.Errorf("a manifest list of more than %d bytes", maxManifest)
	}
	values, _, err := readAvroFile(b)
	if err != nil {
		return nil, err
	}
	out := make([]ice.ManifestFile, 0, len(values))
	for _, v := range values {
		rec, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("a manifest list entry is %T, not a record", v)
		}
		p, ok := rec["manifest_path"].(string)
		if !ok || p == "" {
			return nil, fmt.Errorf("a manifest list entry without manifest_path")
		}
		num := func(name string) (int64, bool) { return looseInt(rec[name]) }
		length, _ := num("manifest_length")
		spec, _ := num("partition_spec_id")
		snap, _ := num("added_snapshot_id")
		version := 1
		seq, hasSeq := num("sequence_number")
		minSeq, _ := num("min_sequence_number")
		content, hasContent := num("content")
		if hasSeq || hasContent {
			version = 2
		}
		b := ice.NewManifestFile(version, p, length, int32(spec), snap)
		if version > 1 {
			b = b.SequenceNum(seq, minSeq).Content(ice.ManifestContent(content))
		}
		if n, ok := num("added_files_count"); ok {
			b = b.AddedFiles(int32(n))
		}
		if n, ok := num("existing_files_count"); ok {
			b = b.ExistingFiles(int32(n))
		}
		if n, ok := num("deleted_files_count"); ok {
			b = b.DeletedFiles(int32(n))
		}
		out = append(out, b.Build())
	}
	return out, nil
}

// decodeManifestList decodes a manifest list's bytes; a panic inside the decoder on
// hostile bytes is an error.
func decodeManifestList(b []byte) (list []ice.ManifestFile, err error) {
	defer func() {
		if r := recover(); r != nil {
			list, err = nil, fmt.Errorf("invalid manifest list: %v", r)
		}
	}()
	return readManifestList(bytes.NewReader(b))
}
