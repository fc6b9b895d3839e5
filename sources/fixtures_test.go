package sources

// podYAML is a valid pod with a host port, as a user writes one.
const podYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: berth/testapp:1
    args: [serve]
    ports:
    - containerPort: 8080
      hostPort: 18080
`
