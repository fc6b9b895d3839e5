package kubeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// mediaProtobuf is the Content-Type client-go's typed clients send.
const mediaProtobuf = "application/vnd.kubernetes.protobuf"

// protoScheme holds the core v1 kinds (and DeleteOptions); protoCodec
// decodes them from Kubernetes protobuf.
var protoScheme, protoCodec = func() (*runtime.Scheme, runtime.Decoder) {
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s, protobuf.NewSerializer(s, s)
}()

// protoMagic starts every Kubernetes protobuf body: the envelope
// (runtime.Unknown) follows.
var protoMagic = []byte("k8s\x00")

// fromProtobuf decodes a protobuf body of a write of kind k (name "" when
// not known) into into and returns its JSON, once checkProtobuf found it
// within the bounds of an object.
func fromProtobuf(k writeKind, name string, data []byte, into runtime.Object) ([]byte, error) {
	if err := checkProtobuf(k, name, data, into); err != nil {
		return nil, err
	}
	obj, _, err := protoCodec.Decode(data, nil, into)
	if err != nil {
		return nil, badRequest("the protobuf body does not decode: " + err.Error())
	}
	return json.Marshal(obj)
}

// checkProtobuf bounds a protobuf body before it is decoded, as objectMap
// bounds JSON: at most maxPatchListItems items in each repeated field and
// maxPatchElements fields in all, by a walk of the wire format guided by
// the Go type the body decodes into (its fields' protobuf tags say which
// fields are messages and which repeat). Decoding costs far more than the
// wire: an empty container is two bytes there and a kilobyte decoded, so
// a 2 MB body held a million. A body the walk cannot follow is a 400, as
// decoding it would be.
func checkProtobuf(k writeKind, name string, data []byte, into runtime.Object) error {
	if !bytes.HasPrefix(data, protoMagic) {
		return nil // the codec refuses it
	}
	apiVersion, kind, raw, err := protoEnvelope(data[len(protoMagic):])
	if err != nil {
		return badRequest("the protobuf body is malformed: " + err.Error())
	}
	t := reflect.TypeOf(into)
	if kind != "" {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil // the codec refuses it
		}
		obj, err := protoScheme.New(gv.WithKind(kind))
		if err != nil {
			return nil // the codec refuses it
		}
		t = reflect.TypeOf(obj)
	}
	w := protoWalk{}
	if err := w.message(raw, t, nil, 0); err != nil {
		return badRequest("the protobuf body is malformed: " + err.Error())
	}
	switch {
	case w.tooLong != nil:
		return tooLarge(k, name, fmt.Sprintf("the protobuf body of %s has more than %d items in %s: at most %d items in one list of an object",
			describe(k, name), maxPatchListItems, w.tooLong, maxPatchListItems))
	case w.tooMany:
		return tooLarge(k, name, fmt.Sprintf("the protobuf body of %s has more than %d values (fields and list items), at most %d in one object",
			describe(k, name), maxPatchElements, maxPatchElements))
	}
	return nil
}

// protoEnvelope reads runtime.Unknown: typeMeta (1: apiVersion 1, kind 2)
// and raw (2), the last of each as its decoder takes them.
func protoEnvelope(b []byte) (apiVersion, kind string, raw []byte, err error) {
	err = protoFields(b, func(num protowire.Number, typ protowire.Type, val []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		payload, _ := protowire.ConsumeBytes(val)
		switch num {
		case 1:
			return protoFields(payload, func(num protowire.Number, typ protowire.Type, val []byte) error {
				s, _ := protowire.ConsumeBytes(val)
				switch {
				case typ != protowire.BytesType:
				case num == 1:
					apiVersion = string(s)
				case num == 2:
					kind = string(s)
				}
				return nil
			})
		case 2:
			raw = payload
		}
		return nil
	})
	return apiVersion, kind, raw, err
}

// protoFields calls f with each field of the message b: its number, wire
// type and encoded value; groups, which no Kubernetes object has, are
// refused.
func protoFields(b []byte, f func(protowire.Number, protowire.Type, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			return fmt.Errorf("field %d is a group", num)
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		if err := f(num, typ, b[:m]); err != nil {
			return err
		}
		b = b[m:]
	}
	return nil
}

// maxProtoDepth bounds the nesting the walk follows; Kubernetes objects
// nest a dozen messages deep.
const maxProtoDepth = 64

// protoWalk counts what a protobuf message would decode to; it stops at
// the first bound passed.
type protoWalk struct {
	values  int
	tooMany bool
	tooLong *step // the list over maxPatchListItems
}

// message walks the fields of b, a message of Go type t (nil: unknown,
// its fields only counted), at path at.
func (w *protoWalk) message(b []byte, t reflect.Type, at *step, depth int) error {
	if depth > maxProtoDepth {
		return fmt.Errorf("nested more than %d messages deep", maxProtoDepth)
	}
	fields := protoSchemaOf(t)
	var items map[protowire.Number]int
	return protoFields(b, func(num protowire.Number, typ protowire.Type, val []byte) error {
		if w.stopped() {
			return nil
		}
		f, known := fields[num]
		n := 1
		if known && f.packed && typ == protowire.BytesType {
			n = packedCount(val, f.wire)
		}
		w.values += n
		if w.values > maxPatchElements {
			w.tooMany = true
			return nil
		}
		if !known {
			return nil
		}
		here := at
		if f.name != "" {
			here = &step{up: at, key: f.name}
		}
		if f.list {
			if items == nil {
				items = map[protowire.Number]int{}
			}
			items[num] += n
			if items[num] > maxPatchListItems {
				w.tooLong = here
				return nil
			}
			here = &step{up: here, index: items[num] - 1}
		}
		if typ != protowire.BytesType || f.msg == nil {
			return nil
		}
		payload, _ := protowire.ConsumeBytes(val)
		if !f.mapping {
			return w.message(payload, f.msg, here, depth+1)
		}
		// A map entry: key 1, value 2, the message f.msg.
		return protoFields(payload, func(num protowire.Number, typ protowire.Type, val []byte) error {
			if num != 2 || typ != protowire.BytesType || w.stopped() {
				return nil
			}
			v, _ := protowire.ConsumeBytes(val)
			return w.message(v, f.msg, here, depth+1)
		})
	})
}

func (w *protoWalk) stopped() bool { return w.tooMany || w.tooLong != nil }

// packedCount counts the scalars of a packed repeated field.
func packedCount(val []byte, wire string) int {
	b, _ := protowire.ConsumeBytes(val)
	switch wire {
	case "fixed32":
		return len(b) / 4
	case "fixed64":
		return len(b) / 8
	}
	n := 0
	for _, c := range b {
		if c < 0x80 {
			n++ // the last byte of a varint
		}
	}
	return n
}

// protoField is what a message's field decodes to.
type protoField struct {
	name    string       // its JSON name; "" for an inlined message
	wire    string       // the tag's wire type: bytes, varint, fixed32, fixed64
	msg     reflect.Type // the message it holds (a map's values), nil for scalars
	list    bool         // repeated, not a map: its occurrences are list items
	mapping bool         // a map: its occurrences are entries
	packed  bool         // a repeated scalar, which may come packed
}

var protoSchemas sync.Map // reflect.Type → map[protowire.Number]protoField

// protoSchemaOf reads the fields of the message type t (a struct or a
// pointer to one) from its protobuf struct tags, as the generated
// Kubernetes types carry them; a type without tags (a Quantity, a Time,
// which encode themselves) has none, and its fields are only counted.
func protoSchemaOf(t reflect.Type) map[protowire.Number]protoField {
	if t == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := protoSchemas.Load(t); ok {
		return s.(map[protowire.Number]protoField)
	}
	fields := map[protowire.Number]protoField{}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			sf := t.Field(i)
			parts := strings.Split(sf.Tag.Get("protobuf"), ",")
			if len(parts) < 3 {
				continue
			}
			num, err := strconv.Atoi(parts[1])
			if err != nil {
				continue
			}
			f := protoField{wire: parts[0], name: strings.Split(sf.Tag.Get("json"), ",")[0]}
			ft := sf.Type
			switch {
			case ft.Kind() == reflect.Map:
				f.mapping = true
				f.msg = messageType(ft.Elem())
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
				f.list = true
				f.msg = messageType(ft.Elem())
				f.packed = f.msg == nil && f.wire != "bytes"
			default:
				f.msg = messageType(ft)
			}
			fields[protowire.Number(num)] = f
		}
	}
	protoSchemas.Store(t, fields)
	return fields
}

// messageType is t as a message (a struct, or a pointer to one); nil for
// scalars.
func messageType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

// step is one step of the path to a value: a map key, or a list index.
type step struct {
	up    *step
	key   string
	index int
}

// String renders the path as Kubernetes names fields: spec.containers[0].env.
func (s *step) String() string {
	var parts []string
	for ; s != nil; s = s.up {
		if s.key != "" {
			parts = append(parts, s.key)
		} else {
			parts = append(parts, "["+strconv.Itoa(s.index)+"]")
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		if b.Len() > 0 && !strings.HasPrefix(parts[i], "[") {
			b.WriteByte('.')
		}
		b.WriteString(parts[i])
	}
	return b.String()
}
