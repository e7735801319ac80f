! A Fortran program that knows nothing of cohort: it counts, through cohort's C API found at run time
! (dlsym; absent: -1), how many of its MPI_Barrier calls went through cohort, and prints PASS when that is
! the count given as its argument (languages.sh: 1 where cohort reaches Fortran, 0 where it cannot).
program consumer_fortran
  use mpi
  use iso_c_binding
  implicit none
  interface
    function dlsym(handle, name) bind(C, name="dlsym")
      import :: c_ptr, c_funptr, c_char
      type(c_ptr), value :: handle
      character(kind=c_char) :: name(*)
      type(c_funptr) :: dlsym
    end function dlsym
  end interface
  abstract interface
    function count_fn(call) bind(C)
      import :: c_long, c_char
      character(kind=c_char) :: call(*)
      integer(c_long) :: count_fn
    end function count_fn
  end interface
  procedure(count_fn), pointer :: cohort_call_count
  type(c_funptr) :: fp
  integer :: ierr, rank, expected
  integer(c_long) :: n
  character(len=16) :: arg

  call get_command_argument(1, arg)
  read (arg, *) expected
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  ! NOTE: RTLD_DEFAULT is a null handle in glibc.
  fp = dlsym(c_null_ptr, "cohort_call_count"//c_null_char)
  n = -1
  if (c_associated(fp)) then
    call c_f_procpointer(fp, cohort_call_count)
    n = cohort_call_count("MPI_Barrier"//c_null_char)
  end if
  if (n == expected) then
    print '(a,i0,a,i0)', 'cohort-test: rank ', rank, ' PASS MPI_Barrier went through cohort times: ', n
  else
    print '(a,i0,a,i0,a,i0)', 'cohort-test: rank ', rank, ' FAIL MPI_Barrier went through cohort times: ', n, &
      ', expected ', expected
  end if
  call MPI_Finalize(ierr)
end program consumer_fortran
