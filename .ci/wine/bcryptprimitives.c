/* A stand-in for Windows' bcryptprimitives.dll, for Wine 8 only (Debian bookworm), which lacks it.
 * Rust's std (1.78+) imports ProcessPrng from it, so without this every Rust .exe fails to load
 * under that Wine (exit 53). Windows 10 and later ship the real DLL; the .exe is unchanged and
 * this file is never part of a release. Built by .ci/cross.sh with mingw-w64 and copied into the
 * Wine prefix's system32. ProcessPrng forwards to RtlGenRandom (advapi32's SystemFunction036),
 * which Wine implements. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
