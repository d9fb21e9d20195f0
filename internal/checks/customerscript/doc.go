// Package customerscript tests scripts/customer, the lifecycle of a customer
// stack, without AWS: fake aws, cdk and doclib-admin commands log their
// arguments and answer canned look-ups.
package customerscript
