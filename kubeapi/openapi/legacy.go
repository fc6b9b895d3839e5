package openapi

import (
	"encoding/json"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

// Content types of the legacy (v2) document, as the apiserver answers
// them.
const (
	LegacyJSON     = "application/json"
	LegacyProtobuf = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// LegacyDocument is the OpenAPI v2 (Swagger 2.0) document, as protobuf
// (what client-go's discovery asks) or JSON, with its content type. It
// lists no path and no definition: the v3 documents describe what berth
// serves. kubectl reads it only for a kind whose v3 document has no PATCH
// (one berth does not serve, or a read-only one); finding no definition
// of the kind, kubectl validates nothing of it on the client and sends it
// on, where mapping or the server refuses it by itself, the other
// documents of the same file still applied.
func LegacyDocument(version string, protobuf bool) ([]byte, string, error) {
	if !protobuf {
		b, err := json.Marshal(map[string]any{"swagger": "2.0",
			"info": map[string]string{"title": "Kubernetes", "version": version}, "paths": map[string]any{}, "definitions": map[string]any{}})
		return b, LegacyJSON, err
	}
	b, err := proto.Marshal(&openapiv2.Document{Swagger: "2.0", Info: &openapiv2.Info{Title: "Kubernetes", Version: version},
		Paths: &openapiv2.Paths{}, Definitions: &openapiv2.Definitions{}})
	return b, LegacyProtobuf, err
}
