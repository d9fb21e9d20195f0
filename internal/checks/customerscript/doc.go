// Package customerscript tests scripts/customer, the lifecycle of a customer
// stack, and the checks and progress lines of scripts/cdk and
// scripts/standin, without AWS: fake aws, cdk, go, npm and doclib-admin
// commands log their arguments and answer canned look-ups.
package customerscript
