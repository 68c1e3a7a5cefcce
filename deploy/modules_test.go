package deploy_test

// The Gateway API and Istio CRDs are read from these modules' directories in the module
// cache (schemas_test.go, moduleDir). The blank imports keep the modules required in go.mod,
// pinned in go.sum and fetched by `go mod download`.
import (
	_ "istio.io/api/networking/v1alpha3"
	_ "sigs.k8s.io/gateway-api/apis/v1beta1"
)
