@echo off
rem Shell completion for `kubectl schedq` (kubectl >= 1.26) on Windows.
rem kubectl runs kubectl_complete-schedq from PATH with the words typed after
rem the plugin's name; put this file on PATH next to kubectl-schedq.exe.
kubectl-schedq.exe __complete %*
