// Package npy reads and writes numpy .npy files (format versions 1.0, 2.0
// and 3.0) as host tensors.
//
// The element types are those numpy and tensor share: bool, signed and
// unsigned integers of 1 to 8 bytes, and float16, float32 and float64, in
// either byte order on read. Strings, objects, complex numbers, datetimes
// and structured types have no tensor equivalent and are refused, as is
// writing bfloat16, which numpy cannot represent. Fortran-order files are
// transposed to row-major order on read; files are always written in
// row-major order, byte for byte as numpy.save writes them.
//
// Read treats its input as untrusted: whatever the header claims, memory
// is only allocated in proportion to the bytes actually present.
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vkops/vkops/tensor"
)

// magic starts every .npy file; the version bytes follow it.
const magic = "\x93NUMPY"

// minChunk is the first allocation when reading a stream of unknown
// length; it doubles from there, so what is allocated stays within a small
// multiple of what the stream delivers.
const minChunk = 512

// Read reads one .npy file from r, which must end where the array's data
// ends: trailing bytes are an error, so Read consumes r up to one byte past
// the data.
func Read(r io.Reader) (*tensor.Host, error) {
	left := int64(-1)
	// These readers know exactly how much they hold, which lets the data
	// buffer be allocated once at its final size.
	switch r := r.(type) {
	case *bytes.Reader:
		left = int64(r.Len())
	case *strings.Reader:
		left = int64(r.Len())
	case *bytes.Buffer:
		left = int64(r.Len())
	}
	return read(&reader{r: r, left: left})
}

// ReadFile reads the .npy file at path.
func ReadFile(path string) (*tensor.Host, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	defer f.Close()
	left := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		left = fi.Size()
	}
	h, err := read(&reader{r: f, left: left})
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return h, nil
}

// reader reads exact byte counts from an untrusted stream.
type reader struct {
	r io.Reader
	// left is how many bytes the stream is believed to hold, or -1 when
	// unknown. It only sizes allocations; running out is detected by
	// reading, since a file may change size after it was measured.
	left int64
}

// full reads n bytes. When the stream ends first it returns what it got
// with io.ErrUnexpectedEOF. Memory grows with the bytes that arrive, never
// ahead of them by more than minChunk or a doubling.
func (rd *reader) full(n int) ([]byte, error) {
	c := min(n, minChunk)
	if rd.left >= 0 {
		c = int(min(int64(n), rd.left))
	}
	buf := make([]byte, 0, c)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, max(2*cap(buf), minChunk)))
			copy(grown, buf)
			buf = grown
		}
		m, err := rd.r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if rd.left >= 0 {
			rd.left = max(0, rd.left-int64(m))
		}
		if err == io.EOF {
			if len(buf) < n {
				return buf, io.ErrUnexpectedEOF
			}
			break
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

func read(rd *reader) (*tensor.Host, error) {
	var pre [12]byte // magic, version, and up to 4 bytes of header length
	n, err := io.ReadFull(rd.r, pre[:8])
	if n < len(magic) && !strings.HasPrefix(magic, string(pre[:n])) || n >= len(magic) && string(pre[:len(magic)]) != magic {
		return nil, fmt.Errorf("npy: not a .npy file (starts %q, want %q)", pre[:n], magic)
	}
	if n == 0 && err == io.EOF {
		return nil, errors.New("npy: empty input, not a .npy file")
	}
	if err != nil {
		return nil, eofError("preamble", err, 8, n)
	}
	major, minor := pre[6], pre[7]
	if major < 1 || major > 3 || minor != 0 {
		return nil, fmt.Errorf("npy: unsupported format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	lenSize := 2
	if major >= 2 {
		lenSize = 4
	}
	if n, err := io.ReadFull(rd.r, pre[8:8+lenSize]); err != nil {
		return nil, eofError("preamble", err, 8+lenSize, 8+n)
	}
	var hlen uint64
	if lenSize == 2 {
		hlen = uint64(binary.LittleEndian.Uint16(pre[8:]))
	} else {
		hlen = uint64(binary.LittleEndian.Uint32(pre[8:]))
	}
	if rd.left >= 0 {
		rd.left = max(0, rd.left-int64(8+lenSize))
	}
	if hlen > uint64(maxInt) {
		return nil, fmt.Errorf("npy: header length %d is too large", hlen)
	}
	hdr, err := rd.full(int(hlen))
	if err != nil {
		return nil, eofError("header", err, int(hlen), len(hdr))
	}
	if !validHeaderText(hdr, major) {
		return nil, errors.New("npy: version 3.0 header is not valid UTF-8")
	}
	h, err := parseHeader(hdr)
	if err != nil {
		return nil, err
	}

	elems := h.shape.NumElements() // the shape has been validated
	size := h.dtype.Size()
	if elems > maxInt/size {
		return nil, fmt.Errorf("npy: shape %v of %v is too large to address", h.shape, h.dtype)
	}
	data, err := rd.full(elems * size)
	if err != nil {
		return nil, eofError("data", err, elems*size, len(data))
	}
	var one [1]byte
	if m, err := io.ReadFull(rd.r, one[:]); m > 0 {
		return nil, fmt.Errorf("npy: trailing bytes after the %d bytes of array data", len(data))
	} else if err != io.EOF {
		return nil, fmt.Errorf("npy: reading past the data: %w", err)
	}

	switch {
	case h.swap:
		swapBytes(data, size)
	case h.dtype == tensor.Bool:
		// numpy reads any nonzero byte as True; tensors hold 0 or 1.
		for i, b := range data {
			if b != 0 {
				data[i] = 1
			}
		}
	}
	if h.fortran && len(h.shape) > 1 && elems > 1 {
		data = fortranToC(data, h.shape, size)
	}
	return &tensor.Host{DType: h.dtype, Shape: h.shape, Data: data}, nil
}

const maxInt = int(^uint(0) >> 1)

// eofError describes a failed read of want bytes of which got arrived.
func eofError(what string, err error, want, got int) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("npy: %s truncated: want %d bytes, got %d", what, want, got)
	}
	return fmt.Errorf("npy: reading %s: %w", what, err)
}

// swapBytes reverses the bytes of each size-byte element of data.
func swapBytes(data []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+1 < len(data); i += 2 {
			binary.LittleEndian.PutUint16(data[i:], binary.BigEndian.Uint16(data[i:]))
		}
	case 4:
		for i := 0; i+3 < len(data); i += 4 {
			binary.LittleEndian.PutUint32(data[i:], binary.BigEndian.Uint32(data[i:]))
		}
	case 8:
		for i := 0; i+7 < len(data); i += 8 {
			binary.LittleEndian.PutUint64(data[i:], binary.BigEndian.Uint64(data[i:]))
		}
	}
}

// fortranToC returns the elements of a column-major array in row-major
// order. It walks the source in storage order, advancing a multi-index
// with the first axis fastest, and places each element at that index's
// row-major offset.
func fortranToC(src []byte, shape tensor.Shape, size int) []byte {
	dst := make([]byte, len(src))
	strides := shape.Strides()
	idx := make([]int, len(shape))
	off := 0 // row-major element offset of idx
	for i := 0; i < len(src); i += size {
		copy(dst[off*size:off*size+size], src[i:i+size])
		for a := range shape {
			idx[a]++
			off += strides[a]
			if idx[a] < shape[a] {
				break
			}
			off -= strides[a] * shape[a]
			idx[a] = 0
		}
	}
	return dst
}

// Write writes h to w as a .npy file, exactly as numpy.save would write
// the same array: format version 1.0 unless the header needs 2.0, and the
// data starting on a 64-byte boundary.
func Write(w io.Writer, h *tensor.Host) error {
	hdr, err := encodeHeader(h)
	if err != nil {
		return err
	}
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("npy: writing header: %w", err)
	}
	if err := writeData(w, h); err != nil {
		return fmt.Errorf("npy: writing data: %w", err)
	}
	return nil
}

// encodeHeader checks h and returns the bytes that precede its data.
func encodeHeader(h *tensor.Host) ([]byte, error) {
	if h == nil {
		return nil, errors.New("npy: nil tensor")
	}
	descr, err := DescrOf(h.DType)
	if err != nil {
		return nil, err
	}
	if err := h.Check(); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return formatHeader(descr, h.Shape)
}

// writeData writes h's elements, with bools as 0 or 1 whatever byte the
// tensor holds, so numpy's view of the file matches tensor's.
func writeData(w io.Writer, h *tensor.Host) error {
	if h.DType != tensor.Bool {
		_, err := w.Write(h.Data)
		return err
	}
	var buf [4096]byte
	for rest := h.Data; len(rest) > 0; {
		n := min(len(rest), len(buf))
		for i, b := range rest[:n] {
			buf[i] = 0
			if b != 0 {
				buf[i] = 1
			}
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// WriteFile writes h to the .npy file at path. It writes a temporary file
// in the same directory and renames it into place, so path is either left
// as it was or holds the complete new file, never a partial one. A new
// file gets mode 0644; an existing file keeps its mode. Where path is a
// symbolic link, the file it names is written so, and the link stays.
// Its errors name path (a link's target), never the temporary file, and
// say why the write failed ("npy: write out/a.npy: directory out does
// not exist"); they wrap the system's error (fs.ErrNotExist,
// fs.ErrPermission).
func WriteFile(path string, h *tensor.Host) (err error) {
	// Refuse a bad tensor before touching the file system.
	if _, err := encodeHeader(h); err != nil {
		return err
	}
	// The rename would replace a link with the file: write its target,
	// as opening path for writing would.
	if path, err = followLinks(path); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	switch fi, statErr := os.Stat(path); {
	case statErr == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("npy: %s is not a regular file", path)
	case statErr == nil:
		perm = fi.Mode().Perm()
	case !errors.Is(statErr, fs.ErrNotExist):
		// A name too long, a file where a directory should be: refused
		// before a temporary file comes and goes.
		return writeError(path, statErr)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+tempBase(filepath.Base(path))+".tmp*")
	if err != nil {
		return writeError(path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := Write(f, h); err != nil {
		return fmt.Errorf("%w (%s)", err, path)
	}
	// Sync before the rename: otherwise a crash can leave the new name
	// pointing at a file whose data never reached the disk.
	if err := f.Sync(); err != nil {
		return writeError(path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return writeError(path, err)
	}
	if err := f.Close(); err != nil {
		return writeError(path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return writeError(path, err)
	}
	return nil
}

// followLinks returns path with the symbolic links of its last element
// followed, to a file that need not exist yet (a dangling link names the
// file to create, as for a shell's >).
func followLinks(path string) (string, error) {
	for range 40 { // Linux's limit on the links of one lookup
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil // what is not a link, WriteFile judges
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", writeError(path, err)
		}
		if !filepath.IsAbs(target) {
			// Not filepath.Join: its cleaning would take a ".." of
			// target lexically, where the directory may be a link.
			target = filepath.Dir(path) + string(filepath.Separator) + target
		}
		path = target
	}
	return "", writeError(path, syscall.ELOOP)
}

// tempBase is the part of the file name base that WriteFile's temporary
// file repeats: at most 200 bytes, whole runes, so that the temporary
// name (base, a dot, ".tmp" and up to 10 digits) fits where base does.
func tempBase(base string) string {
	if len(base) <= 200 {
		return base
	}
	return strings.ToValidUTF8(base[:200], "")
}

// writeError is err, which befell WriteFile's temporary file or its
// rename onto path, as an error about path, with the reason: the
// temporary file's name means nothing to the caller. It wraps err.
func writeError(path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	// Where the directory is missing or a file stands in its way, say
	// which.
	dir := filepath.Dir(path)
	for p := dir; ; p = filepath.Dir(p) {
		fi, statErr := os.Stat(p)
		switch {
		case statErr == nil && !fi.IsDir():
			return &pathError{fmt.Sprintf("npy: write %s: %s is not a directory", path, p), err}
		case errors.Is(statErr, fs.ErrNotExist) && p == dir:
			return &pathError{fmt.Sprintf("npy: write %s: directory %s does not exist", path, dir), err}
		}
		if statErr == nil || p == filepath.Dir(p) {
			break
		}
	}
	return &pathError{fmt.Sprintf("npy: write %s: %v", path, err), err}
}

// pathError is WriteFile's error: its message and the system's error.
type pathError struct {
	msg string
	err error
}

func (e *pathError) Error() string { return e.msg }
func (e *pathError) Unwrap() error { return e.err }
