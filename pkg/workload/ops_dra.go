package workload

import (
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
)

// createResourceClaimsOp is upstream's createResourceClaimsOp (dra.go), as
// written.
type createResourceClaimsOp struct {
	Opcode       Opcode
	Count        int
	CountParam   string
	Namespace    string
	TemplatePath string
}

func (op *createResourceClaimsOp) isValid(allowParameterization bool) error {
	if !isValidCount(allowParameterization, op.Count, op.CountParam) {
		return countError(op.Count, op.CountParam)
	}
	if op.Namespace == "" {
		return errorf("namespace must be set")
	}
	if op.TemplatePath == "" {
		return errorf("templatePath must be set")
	}
	return nil
}

func (*createResourceClaimsOp) collectsMetrics() bool { return false }

func (r *createResourceClaimsOp) bind(b *binder, pos OpPos) ([]Op, error) {
	c := *r
	if r.CountParam != "" {
		var err error
		if c.Count, err = b.int("countParam", r.CountParam); err != nil {
			return nil, err
		}
	}
	if err := c.isValid(false); err != nil {
		return nil, err
	}
	op := &CreateResourceClaims{OpPos: pos, Count: c.Count, Namespace: c.Namespace, TemplatePath: b.f.resolve(c.TemplatePath), Claim: &resourcev1.ResourceClaim{}}
	if err := b.load.strict(op.TemplatePath, op.Claim); err != nil {
		return nil, fmt.Errorf("templatePath: %w", err)
	}
	return one(op, nil)
}

// CreateResourceClaims creates Count copies of Claim in Namespace (created
// if missing). The template is plain YAML, not a Go template, as upstream
// reads it; the claim should use generateName.
type CreateResourceClaims struct {
	OpPos
	Count        int
	Namespace    string
	TemplatePath string
	Claim        *resourcev1.ResourceClaim
}

// Opcode implements Op.
func (*CreateResourceClaims) Opcode() Opcode { return OpcodeCreateResourceClaims }

// allocResourceClaimsOp is upstream's allocResourceClaimsOp (dra.go), as
// written.
type allocResourceClaimsOp struct {
	Opcode    Opcode
	Namespace string
}

func (*allocResourceClaimsOp) isValid(bool) error    { return nil }
func (*allocResourceClaimsOp) collectsMetrics() bool { return false }

func (r *allocResourceClaimsOp) bind(_ *binder, pos OpPos) ([]Op, error) {
	return one(&AllocResourceClaims{OpPos: pos, Namespace: r.Namespace}, nil)
}

// AllocResourceClaims allocates the ResourceClaims in Namespace (all
// namespaces when empty) without pods, with the scheduler's structured
// allocator, and writes the allocations to their status.
type AllocResourceClaims struct {
	OpPos
	Namespace string
}

// Opcode implements Op.
func (*AllocResourceClaims) Opcode() Opcode { return OpcodeAllocResourceClaims }
