package printers

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodTable is pods as the API answers a Table of them: kubectl's pod
// columns (printPod's cells, ages at now), each row's object its metadata.
// The one pod row printer, for the pods a berth does not serve (berth get
// pods --all-nodes lists them from etcd).
func PodTable(pods []v1.Pod, now time.Time) (*metav1.Table, error) {
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"},
		ColumnDefinitions: PodColumns, Rows: make([]metav1.TableRow, 0, len(pods))}
	for i := range pods {
		row, err := Row(&pods[i], PodCells, now, metav1.IncludeMetadata)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}
