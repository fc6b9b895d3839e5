package kubeapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// secretJSON is a Secret as `kubectl apply` creates it: a value in data,
// one in stringData, both again in the last-applied annotation.
func secretJSON(name, value string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(value))
	last := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"` + name + `","namespace":"default"},` +
		`"data":{"pw":"` + enc + `"},"stringData":{"token":"` + value + `-token"}}`
	lastJSON, _ := json.Marshal(last)
	return `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"` + name + `","annotations":{` +
		`"kubectl.kubernetes.io/last-applied-configuration":` + string(lastJSON) + `}},` +
		`"data":{"pw":"` + enc + `"},"stringData":{"token":"` + value + `-token"}}`
}

// leaks returns the forms of value an answer must not hold: as sent, in
// base64, and the stringData value.
func leaks(value string) []string {
	return []string{value, base64.StdEncoding.EncodeToString([]byte(value)), value + "-token",
		base64.StdEncoding.EncodeToString([]byte(value + "-token"))}
}

func (f *writeFixture) createSecret(t *testing.T, name, value string) {
	t.Helper()
	code, _, body := f.do(t, "POST", "/api/v1/namespaces/default/secrets", "application/json", secretJSON(name, value),
		"Authorization", "Bearer push")
	if code != http.StatusCreated {
		t.Fatalf("create secret %s: %d %s", name, code, body)
	}
	assertNoValue(t, "create "+name, body, value)
}

func assertNoValue(t *testing.T, what, body, value string) {
	t.Helper()
	for _, l := range leaks(value) {
		if strings.Contains(body, l) {
			t.Errorf("%s: the answer holds a value (%q):\n%.600s", what, l, body)
			return
		}
	}
}

// TestSecretWriteAnswersWithholdValues: no answer to a write of a Secret
// holds a value, dry run included, as GET serves it: keys with empty
// values, the last-applied annotation emptied.
func TestSecretWriteAnswersWithholdValues(t *testing.T) {
	f := newWriteFixture(t)
	const value = "hunter2-value"
	f.createSecret(t, "pw", value)
	path := "/api/v1/namespaces/default/secrets/pw"
	for _, tc := range []struct{ method, path, ctype, body string }{
		{"PATCH", path + "?dryRun=All", patchMerge, `{}`},
		{"PATCH", path + "?dryRun=All", patchStrategic, `{}`},
		{"PATCH", path + "?dryRun=All", patchJSON, `[]`},
		{"PATCH", path, patchMerge, `{"metadata":{"labels":{"a":"b"}}}`},
		{"PATCH", path, patchJSON, `[{"op":"add","path":"/metadata/labels/c","value":"d"}]`},
		{"PUT", path + "?dryRun=All", "application/json", secretJSON("pw", value)},
		{"PUT", path, "application/json", secretJSON("pw", value)},
		{"POST", "/api/v1/namespaces/default/secrets?dryRun=All", "application/json", secretJSON("other", value)},
		{"DELETE", path + "?dryRun=All", "", ""},
		{"DELETE", path, "", ""},
	} {
		code, _, body := f.do(t, tc.method, tc.path, tc.ctype, tc.body, "Authorization", "Bearer push")
		if code/100 != 2 {
			t.Errorf("%s %s %s: %d %.300s", tc.method, tc.path, tc.body, code, body)
			continue
		}
		assertNoValue(t, tc.method+" "+tc.path+" "+tc.body, body, value)
		if tc.method != "DELETE" && (!strings.Contains(body, `"pw":""`) || !strings.Contains(body, `"berth.io/data-withheld":"true"`)) {
			t.Errorf("%s %s: the answer is not the Secret as GET serves it: %.600s", tc.method, tc.path, body)
		}
	}
}

// TestSecretJSONPatchCannotReadValues: a JSON patch of a Secret may not
// copy, move or test what GET withholds (data, stringData, the
// last-applied annotation, or anything holding them), however the pointer
// is spelt: 422 naming the operation, and nothing moved.
func TestSecretJSONPatchCannotReadValues(t *testing.T) {
	f := newWriteFixture(t)
	const value = "hunter2-value"
	f.createSecret(t, "pw", value)
	path := "/api/v1/namespaces/default/secrets/pw"
	enc := base64.StdEncoding.EncodeToString([]byte(value))
	for _, tc := range []struct{ op, patch string }{
		{"copy", `[{"op":"copy","from":"/data/pw","path":"/metadata/annotations/x"}]`},
		{"copy", `[{"op":"copy","from":"/stringData/token","path":"/metadata/annotations/x"}]`},
		{"copy", `[{"op":"copy","from":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","path":"/metadata/annotations/x"}]`},
		{"copy", `[{"op":"copy","from":"/data","path":"/metadata/labels"}]`},
		{"copy", `[{"op":"copy","from":"/metadata","path":"/x"}]`},
		{"copy", `[{"op":"copy","from":"x/data/pw","path":"/metadata/annotations/x"}]`},
		{"copy", `[{"op":"copy","from":"/d\u0061ta/pw","path":"/metadata/annotations/x"}]`},
		{"move", `[{"op":"move","from":"/data/pw","path":"/metadata/annotations/x"}]`},
		{"move", `[{"op":"move","from":"/stringData/token","path":"/type"}]`},
		{"test", `[{"op":"test","path":"/data/pw","value":"` + enc + `"}]`},
		{"test", `[{"op":"test","path":"/stringData/token","value":"` + value + `-token"}]`},
		{"test", `[{"op":"test","path":"/data","value":{"pw":"` + enc + `"}}]`},
		{"test", `[{"op":"test","path":"","value":{}}]`},
		{"test", `[{"op":"test","path":"/metadata/annotations","value":{}}]`},
	} {
		code, _, body := f.do(t, "PATCH", path, patchJSON, tc.patch, "Authorization", "Bearer push")
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, tc.op) || !strings.Contains(body, "withheld") {
			t.Errorf("%s: %d %.300s", tc.patch, code, body)
		}
		assertNoValue(t, tc.patch, body, value)
	}
	code, _, body := f.do(t, "GET", path, "", "", "Authorization", "Bearer push")
	if code != http.StatusOK || strings.Contains(body, `"x"`) {
		t.Fatalf("GET after the refused patches: %d %s", code, body)
	}
	assertNoValue(t, "GET", body, value)
	// Operations that only write still apply: a key replaced, another
	// removed (stringData's is in data, as the apiserver stores a Secret),
	// moves and copies among other fields.
	ok := `[{"op":"replace","path":"/data/pw","value":"bmV3"},{"op":"remove","path":"/data/token"},` +
		`{"op":"add","path":"/metadata/labels","value":{"a":"b"}},{"op":"copy","from":"/metadata/labels/a","path":"/metadata/labels/c"},` +
		`{"op":"test","path":"/metadata/labels/c","value":"b"}]`
	if code, _, body := f.do(t, "PATCH", path, patchJSON, ok, "Authorization", "Bearer push"); code != http.StatusOK {
		t.Fatalf("a patch that reads no value: %d %s", code, body)
	}
}

var volatile = regexp.MustCompile(`"(uid|resourceVersion|creationTimestamp)":"[^"]*"`)

// TestSecretPatchesAreNoOracle: a patch tells nothing of the values it
// cannot read: every patch (JSON, merge, strategic, dry run or not)
// answers alike for two Secrets that differ only in their values.
func TestSecretPatchesAreNoOracle(t *testing.T) {
	f := newWriteFixture(t)
	f.createSecret(t, "alpha-secret", "value-one")
	f.createSecret(t, "bravo-secret", "value-two")
	guess := base64.StdEncoding.EncodeToString([]byte("value-one"))
	for _, tc := range []struct{ ctype, body string }{
		{patchMerge, `{}`},
		{patchMerge, `{"data":{"pw":null}}`},
		{patchMerge, `{"data":{"pw":{"x":1}}}`},
		{patchMerge, `{"type":"kubernetes.io/basic-auth"}`},
		{patchStrategic, `{}`},
		{patchStrategic, `{"data":{"pw":"` + guess + `"}}`},
		{patchStrategic, `{"data":{"$patch":"replace","pw":"` + guess + `"}}`},
		{patchStrategic, `{"data":{"pw":{"$patch":"delete"}}}`},
		{patchStrategic, `{"$retainKeys":["data"],"data":{"pw":"` + guess + `"}}`},
		{patchStrategic, `{"data":["` + guess + `"]}`},
		{patchStrategic, `{"$deleteFromPrimitiveList/data":["` + guess + `"]}`},
		{patchJSON, `[{"op":"test","path":"/data/pw","value":"` + guess + `"}]`},
		{patchJSON, `[{"op":"replace","path":"/data/pw/x","value":"a"}]`},
		{patchJSON, `[{"op":"add","path":"/data/pw/0","value":"a"}]`},
		{patchJSON, `[{"op":"remove","path":"/data/pw"}]`},
	} {
		for _, dry := range []string{"?dryRun=All", ""} {
			var answers [2]string
			for i, name := range []string{"alpha-secret", "bravo-secret"} {
				code, _, body := f.do(t, "PATCH", "/api/v1/namespaces/default/secrets/"+name+dry, tc.ctype, tc.body,
					"Authorization", "Bearer push")
				assertNoValue(t, tc.body, body, "value-one")
				assertNoValue(t, tc.body, body, "value-two")
				answers[i] = http.StatusText(code) + " " + volatile.ReplaceAllString(strings.ReplaceAll(body, name, "NAME"), "")
				if code/100 == 2 && dry == "" {
					// Undo, so both stay alike but for their values.
					f.do(t, "PUT", "/api/v1/namespaces/default/secrets/"+name, "application/json",
						secretJSON(name, map[string]string{"alpha-secret": "value-one", "bravo-secret": "value-two"}[name]))
				}
			}
			if answers[0] != answers[1] {
				t.Errorf("%s %s%s answers differ with the values:\n%.600s\n%.600s", tc.ctype, tc.body, dry, answers[0], answers[1])
			}
		}
	}
}
