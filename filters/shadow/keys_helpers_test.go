package shadow

// The tests name tenants and ids through the zero keyring (an empty
// secret); keyring_test.go covers what the secret changes.
var testKeys Keyring

func ID(tenant string, content []byte) string { return testKeys.ID(tenant, content) }

func Tenant(headers map[string]string, configured string) string {
	return testKeys.Tenant(headers, configured)
}
