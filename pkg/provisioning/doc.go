// Package provisioning holds no code: its tests check that docker-compose.yaml and provisioning/ are consistent
// with the repository (mounted paths exist, uids resolve, both plugin ids are allowed), since no Docker engine
// runs where the test suite does.
package provisioning
