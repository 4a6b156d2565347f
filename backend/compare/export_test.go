package compare

// Fixture builders for the external test package (cli_test.go).
type (
	Obj = obj
	Arr = arr
)

var (
	BaseRecord   = baseRecord
	Finish       = finish
	FinishValid  = finishValid
	Frame        = frame
	Rendered     = rendered
	TestContract = testContract
)
