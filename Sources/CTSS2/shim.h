// tpm2-tss's headers (Debian: libtss2-dev), for their types and constants only: CofferKeystore loads the libraries
// with dlopen when a TPM is used, so that Coffer runs on machines without them.
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_mu.h>
