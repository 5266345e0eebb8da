// Package provisioning holds no code: its tests check that docker-compose.yaml and provisioning/ are consistent
// with the repository (mounted paths exist, uids resolve, both plugin ids are allowed), that the compose stack's
// simulators fill every shipped dashboard, and that the READMEs' counts and lists are true, since no Docker engine
// runs where the test suite does.
package provisioning
