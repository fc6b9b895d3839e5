package kubeapi

import "github.com/berth-dev/berth/kubeapi/registry"

// Names the registry defines that the API's users and handlers share.
const (
	WatchAdded         = registry.WatchAdded
	WatchModified      = registry.WatchModified
	WatchDeleted       = registry.WatchDeleted
	WatchBookmark      = registry.WatchBookmark
	InitialEventsEnd   = registry.InitialEventsEnd
	LeaseGroupVersion  = registry.LeaseGroupVersion
	SourceAnnotation   = registry.SourceAnnotation
	OriginAnnotation   = registry.OriginAnnotation
	RejectedAnnotation = registry.RejectedAnnotation
	ReadOnlyAnnotation = registry.ReadOnlyAnnotation
	WithheldAnnotation = registry.WithheldAnnotation
)

// The usage metrics.k8s.io serves (registry's).
type (
	UsageSource    = registry.UsageSource
	Usage          = registry.Usage
	NodeUsage      = registry.NodeUsage
	PodUsage       = registry.PodUsage
	ContainerUsage = registry.ContainerUsage
)
