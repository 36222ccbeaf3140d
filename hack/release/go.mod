module github.com/kubectl-schedq/kubectl-schedq/hack/release

go 1.26.0
