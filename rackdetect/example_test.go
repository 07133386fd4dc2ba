package rackdetect_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/rackfetch/kafka-go/rackdetect"
)

// Detect tries the sources in order. For Amazon MSK, whose broker.rack is
// the AZ ID: EKS's zone-id node label, then IMDS. Here the label is not
// exposed and a stand-in for the EC2 metadata service answers; on EC2,
// leave Endpoint and File empty.
func ExampleDetect() {
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/latest/api/token":
			fmt.Fprint(w, "token")
		case r.Header.Get("X-aws-ec2-metadata-token") == "token" && r.URL.Path == "/latest/meta-data/placement/availability-zone-id":
			fmt.Fprint(w, "use1-az4")
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer imds.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rack, err := rackdetect.Detect(ctx,
		rackdetect.Kubernetes{File: "/nonexistent/podinfo/labels", Label: rackdetect.ZoneIDLabel},
		rackdetect.EC2{Endpoint: imds.URL},
	)
	fmt.Println(rack, err)
	// Output: use1-az4 <nil>
}
