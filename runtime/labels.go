package runtime

import (
	"strconv"

	"github.com/berth-dev/berth/model"
)

// FillFromLabels sets the pod identity fields of c from its labels.
func FillFromLabels(c *model.Container, labels map[string]string) {
	c.Labels = labels
	ns, name := labels[LabelPodNamespace], labels[LabelPodName]
	if ns != "" || name != "" {
		c.PodKey = ns + "/" + name
	}
	c.PodUID = labels[LabelPodUID]
	c.Name = labels[LabelContainerName]
	c.Hash = labels[LabelContainerHash]
	c.Source = labels[LabelSource]
	c.Attempt, _ = strconv.Atoi(labels[LabelAttempt])
	c.RestartCount, _ = strconv.Atoi(labels[LabelRestartCount])
}
