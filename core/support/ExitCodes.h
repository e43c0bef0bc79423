// The exit status of jointscope-cli, in one place: the CLI returns them, the GUI reads them (views/CliJob),
// scripts and CI test them. A usage error is EX_USAGE (sysexits.h), never a result a caller acts on.
#pragma once

namespace jointscope {

enum ExitCode : int {
    kExitOk = 0,
    kExitDiffers = 1,  // check / validate / diff: the result differs (torch's decision, outputs, graphs)
    kExitBadInput = 2, // the input could not be read or parsed (a located message is on stderr)
    kExitInvalidPartition = 3, // validate: the backward lacks a value
    kExitCannotRun = 4,        // validate / profile / run: an op could not run (named on stderr)
    kExitNoSandbox = 5, // validate / profile / run: the OS guard cannot be set up (Sandbox.h; --no-sandbox)
    kExitUsage = 64,    // bad command line (EX_USAGE)
};

} // namespace jointscope
