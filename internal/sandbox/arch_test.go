package sandbox_test

import "runtime"

var isARM64 = runtime.GOARCH == "arm64"
