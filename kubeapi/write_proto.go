package kubeapi

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// mediaProtobuf is the Content-Type client-go's typed clients send.
const mediaProtobuf = "application/vnd.kubernetes.protobuf"

// protoCodec decodes the core v1 kinds (and DeleteOptions) from
// Kubernetes protobuf.
var protoCodec = func() runtime.Decoder {
	s := runtime.NewScheme()
	if err := v1.AddToScheme(s); err != nil {
		panic(err)
	}
	return protobuf.NewSerializer(s, s)
}()

// fromProtobuf decodes a protobuf body into into and returns its JSON.
func fromProtobuf(data []byte, into runtime.Object) ([]byte, error) {
	obj, _, err := protoCodec.Decode(data, nil, into)
	if err != nil {
		return nil, badRequest("the protobuf body does not decode: " + err.Error())
	}
	return json.Marshal(obj)
}
