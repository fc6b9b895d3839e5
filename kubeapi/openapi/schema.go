package openapi

import (
	"reflect"
	"strings"
)

// schemaGen builds OpenAPI v3 component schemas from Go types by
// reflection over their json tags, as Kubernetes' generated definitions
// are: one named schema per struct type, named by its package in reverse
// domain form (io.k8s.api.core.v1.Pod); fields referring to a struct
// through allOf/$ref; descriptions from the types' SwaggerDoc; patch
// strategy and merge key from the patchStrategy and patchMergeKey tags.
type schemaGen struct {
	schemas map[string]map[string]any
	// names overrides the schema name of a type (Spec.Names).
	names map[reflect.Type]string
}

func newSchemaGen() *schemaGen {
	return &schemaGen{schemas: map[string]map[string]any{}, names: map[reflect.Type]string{}}
}

// schemaName is the component name of named type t.
func (g *schemaGen) schemaName(t reflect.Type) string {
	if n, ok := g.names[t]; ok {
		return n
	}
	pkg := t.PkgPath()
	host, rest, _ := strings.Cut(pkg, "/")
	parts := strings.Split(host, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	name := strings.Join(parts, ".")
	if rest != "" {
		name += "." + strings.ReplaceAll(rest, "/", ".")
	}
	return name + "." + t.Name()
}

func ref(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// swaggerDoc returns t's SwaggerDoc (field json name → description, ""
// for the type), if it has one.
func swaggerDoc(t reflect.Type) map[string]string {
	m, ok := t.MethodByName("SwaggerDoc")
	if !ok || m.Type.NumIn() != 1 || m.Type.NumOut() != 1 {
		return nil
	}
	out := m.Func.Call([]reflect.Value{reflect.New(t).Elem()})
	doc, _ := out[0].Interface().(map[string]string)
	return doc
}

// openAPIType is what a type with custom JSON says of its schema
// (metav1.Time, resource.Quantity, intstr.IntOrString...).
func openAPIType(t reflect.Type) (map[string]any, bool) {
	v := reflect.New(t).Elem()
	m := v.MethodByName("OpenAPISchemaType")
	if !m.IsValid() {
		return nil, false
	}
	types, _ := m.Call(nil)[0].Interface().([]string)
	s := map[string]any{}
	if f := v.MethodByName("OpenAPISchemaFormat"); f.IsValid() {
		if format, _ := f.Call(nil)[0].Interface().(string); format != "" {
			s["format"] = format
		}
	}
	if one := v.MethodByName("OpenAPIV3OneOfTypes"); one.IsValid() {
		var alts []any
		for _, typ := range one.Call(nil)[0].Interface().([]string) {
			alts = append(alts, map[string]any{"type": typ})
		}
		s["oneOf"] = alts
		if t.Name() == "IntOrString" {
			s["x-kubernetes-int-or-string"] = true
		}
		return s, true
	}
	if len(types) == 1 {
		s["type"] = types[0]
	}
	return s, true
}

// fieldSchema is the schema of a value of type t at a field.
func (g *schemaGen) fieldSchema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() != "" && t.PkgPath() != "" {
		if _, custom := openAPIType(t); custom || t.Kind() == reflect.Struct {
			return map[string]any{"allOf": []any{ref(g.define(t))}}
		}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int32, reflect.Uint32, reflect.Int16, reflect.Uint16, reflect.Int8, reflect.Uint8:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": g.itemSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.itemSchema(t.Elem())}
	case reflect.Struct:
		return g.structSchema(t)
	}
	return map[string]any{"type": "object"}
}

// itemSchema is the schema of an array item or map value: a struct is a
// plain $ref inside allOf, with an empty default as Kubernetes has it.
func (g *schemaGen) itemSchema(t reflect.Type) map[string]any {
	s := g.fieldSchema(t)
	if plainStruct(t) {
		s["default"] = map[string]any{}
	}
	return s
}

// plainStruct reports whether t is a struct (not a pointer to one)
// without a custom schema: its zero value is the default {}.
func plainStruct(t reflect.Type) bool {
	if t.Kind() != reflect.Struct || t.Name() == "" {
		return false
	}
	_, custom := openAPIType(t)
	return !custom
}

// define adds named type t's schema to the components (once) and returns
// its name.
func (g *schemaGen) define(t reflect.Type) string {
	name := g.schemaName(t)
	if _, ok := g.schemas[name]; ok {
		return name
	}
	g.schemas[name] = map[string]any{} // placeholder: recursive types
	var s map[string]any
	if custom, ok := openAPIType(t); ok {
		s = custom
	} else {
		s = g.structSchema(t)
	}
	if d := swaggerDoc(t)[""]; d != "" {
		s["description"] = d
	}
	g.schemas[name] = s
	return name
}

// structSchema is an object with t's json fields; inline embedded
// structs' fields are its own.
func (g *schemaGen) structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	g.addFields(t, props)
	return map[string]any{"type": "object", "properties": props}
}

func (g *schemaGen) addFields(t reflect.Type, props map[string]any) {
	doc := swaggerDoc(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.addFields(ft, props)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		s := g.fieldSchema(f.Type)
		if d := doc[name]; d != "" {
			s["description"] = d
		}
		if plainStruct(f.Type) {
			s["default"] = map[string]any{}
		}
		if v := f.Tag.Get("patchStrategy"); v != "" {
			s["x-kubernetes-patch-strategy"] = v
		}
		if v := f.Tag.Get("patchMergeKey"); v != "" {
			s["x-kubernetes-patch-merge-key"] = v
		}
		props[name] = s
	}
}
