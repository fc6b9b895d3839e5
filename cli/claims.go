package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// claimAliases are the names kubectl takes for claims.
var claimAliases = []string{"pvc", "pvcs", "persistentvolumeclaim"}

// getClaimsCmd is berth get pvc: the node's claims as kubectl prints them.
func getClaimsCmd() *cobra.Command {
	var client apiClient
	var output string
	cmd := &cobra.Command{
		Use:     "persistentvolumeclaims",
		Aliases: claimAliases,
		Short:   "List PersistentVolumeClaims (NAMESPACE NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS AGE)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			var list v1.PersistentVolumeClaimList
			if err := client.getJSON(cmd.Context(), "/persistentvolumeclaims", &list); err != nil {
				return err
			}
			return printClaims(cmd.OutOrStdout(), cmd.ErrOrStderr(), &list, output, time.Now())
		},
	}
	client.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: wide, json or yaml")
	return cmd
}

// claimColumns are get pvc's columns, the last two -o wide's.
var claimColumns = []metav1.TableColumnDefinition{
	{Name: "Namespace", Type: "string"}, {Name: "Name", Type: "string", Format: "name"}, {Name: "Status", Type: "string"},
	{Name: "Volume", Type: "string"}, {Name: "Capacity", Type: "string"}, {Name: "Access Modes", Type: "string"},
	{Name: "StorageClass", Type: "string"}, {Name: "Age", Type: "string"},
	{Name: "Source", Type: "string", Priority: 1}, {Name: "Used By", Type: "string", Priority: 1},
}

func printClaims(w, stderr io.Writer, list *v1.PersistentVolumeClaimList, output string, now time.Time) error {
	if output == "json" || output == "yaml" {
		p, err := resourcePrinter(outputFormat{kind: output})
		if err != nil {
			return err
		}
		if list.Kind == "" {
			list.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaimList"}
		}
		return p.PrintObj(list, w)
	}
	t := &metav1.Table{ColumnDefinitions: claimColumns}
	for i := range list.Items {
		c := &list.Items[i]
		capacity := ""
		if q, ok := c.Status.Capacity[v1.ResourceStorage]; ok {
			capacity = q.String()
		}
		class, age := "", "<unknown>"
		if c.Spec.StorageClassName != nil {
			class = *c.Spec.StorageClassName
		}
		if !c.CreationTimestamp.IsZero() {
			age = duration.HumanDuration(now.Sub(c.CreationTimestamp.Time))
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{c.Namespace, c.Name, string(c.Status.Phase), c.Spec.VolumeName, capacity,
			accessModes(c.Spec.AccessModes), class, age, c.Annotations["berth.io/source"], c.Annotations["berth.io/used-by"]}})
	}
	return printTable(w, stderr, t, output == "wide")
}

// accessModes abbreviates as kubectl does (RWO, ROX, RWX, RWOP).
func accessModes(modes []v1.PersistentVolumeAccessMode) string {
	short := map[v1.PersistentVolumeAccessMode]string{v1.ReadWriteOnce: "RWO", v1.ReadOnlyMany: "ROX", v1.ReadWriteMany: "RWX", v1.ReadWriteOncePod: "RWOP"}
	var out []string
	for _, m := range modes {
		if s, ok := short[m]; ok {
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}

// deleteClaimsCmd is berth delete pvc: remove claims' data volumes from
// the local berth, refused while a pod uses them.
func deleteClaimsCmd() *cobra.Command {
	var client apiClient
	var namespace string
	cmd := &cobra.Command{
		Use:     "persistentvolumeclaim NAME...",
		Aliases: []string{"pvc", "pvcs", "persistentvolumeclaims"},
		Short:   "Delete claims' data volumes from the local berth (refused while a pod uses one)",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, name := range args {
				if err := deleteClaim(cmd.Context(), &client, namespace, name); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "persistentvolumeclaim %q deleted\n", name)
			}
			return nil
		},
	}
	client.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of the claims")
	return cmd
}

func deleteClaim(ctx context.Context, client *apiClient, namespace, name string) error {
	req, err := client.newRequest(ctx, http.MethodDelete, "/persistentvolumeclaims/"+url.PathEscape(namespace)+"/"+url.PathEscape(name), nil)
	if err != nil {
		return err
	}
	resp, err := client.stream(req, 30*time.Second)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
